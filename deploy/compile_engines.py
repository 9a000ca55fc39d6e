"""Compile the rule engines' hot modules with mypyc, in place (``make install``).

Usage: python deploy/compile_engines.py services/games/…/rules.py …

The compiled modules share one runtime library. mypyc names it after a hash of the modules
and puts it at the top level of the build, where only a process started from the
checkout's root can import it: the console scripts (``tabletop``, ``tabletop-serve``) could
not. Named inside the ``services`` package, it is found wherever ``services`` is.
"""

from __future__ import annotations

import sys

from mypyc.build import mypycify
from setuptools import setup  # type: ignore[import-untyped]

#: the shared library's module (mypyc appends ``__mypyc``)
GROUP = "services.games._engines"


def main(paths: list[str]) -> None:
    if not paths:
        raise SystemExit("usage: compile_engines.py MODULE.py ...")
    setup(
        name="tabletop-compiled-engines",
        ext_modules=mypycify(paths, group_name=GROUP, opt_level="3"),
        script_args=["build_ext", "--inplace"],
    )


if __name__ == "__main__":
    main(sys.argv[1:])
