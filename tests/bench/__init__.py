"""Tabletop benchmarks (``make bench`` / ``python -m tests.bench``).

Every figure is measured next to a *floor* taken in the same run on the same machine — a
bare Kafka write, a bare gRPC call, a no-op fold — so it reads as a ratio to what the
machine allows. Results go to ``BENCHMARKS.md`` (a table) and ``bench-results.json``.

Nothing here asserts a time: targets are reported as met / not met, never enforced.
"""
