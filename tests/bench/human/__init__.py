"""Capacity at human pace (issue 43): matches whose people think between moves.

``loadgen/`` is the load generator, in Go (grpc-go): thousands of open streams and
actions a second cost it a small share of the machine it measures, which Python's grpc
client could not promise. ``build.py`` builds it, ``generator.py`` drives it step by step,
``capacity.py`` runs the steps against an ephemeral stack (an idle step, then a ramp) and
reads each process's CPU and memory; ``peer.py`` runs the same shape against
boardgame.io; ``figures.py`` turns both into the report's figures.
"""
