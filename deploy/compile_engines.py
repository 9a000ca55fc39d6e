"""Compile the rule engines' hot modules with mypyc, in place (``make install``, the image).

Usage:
    python deploy/compile_engines.py [MODULE.py ...]   compile these (default: every listed one)
    python deploy/compile_engines.py --list            print the listed modules' paths
    python deploy/compile_engines.py --requirements    print the pins the compile needs
    python deploy/compile_engines.py --check-imported  fail unless Python imports them compiled

The modules are listed in one place, ``[tool.tabletop.compiled]`` of pyproject.toml; the
compiler (mypy, which ships mypyc) and the stubs its type check reads come at the pins of the
``dev`` extra, so the image compiles with what ``make install`` compiles with.

The compiled modules share one runtime library. mypyc names it after a hash of the modules
and puts it at the top level of the build, where only a process started from the
checkout's root can import it: the console scripts (``tabletop``, ``tabletop-serve``) could
not. Named inside the ``services`` package, it is found wherever ``services`` is.
"""

from __future__ import annotations

import importlib
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: the shared library's module (mypyc appends ``__mypyc``)
GROUP = "services.games._engines"
#: what the compile needs of the dev extra: the compiler and the stubs of the type check
_COMPILER = ("mypy==", "types-")


def _pyproject(root: Path) -> dict[str, Any]:
    return tomllib.loads((root / "pyproject.toml").read_text())


def compiled_paths(root: Path = ROOT) -> list[str]:
    """The compiled modules' source files, relative to the checkout's root."""
    paths: list[str] = _pyproject(root)["tool"]["tabletop"]["compiled"]["modules"]
    return paths


def compiled_modules(root: Path = ROOT) -> list[str]:
    """The compiled modules' dotted names (``services.games.crashland.rules``)."""
    return [path.removesuffix(".py").replace("/", ".") for path in compiled_paths(root)]


def requirements(root: Path = ROOT) -> list[str]:
    """mypy and the stubs at the dev extra's pins, and a setuptools that builds extensions."""
    pyproject = _pyproject(root)
    dev: list[str] = pyproject["project"]["optional-dependencies"]["dev"]
    build: list[str] = pyproject["build-system"]["requires"]
    return [r for r in dev if r.startswith(_COMPILER)] + [
        r for r in build if r.startswith("setuptools")
    ]


def compile_in_place(paths: list[str]) -> None:
    from mypyc.build import mypycify
    from setuptools import setup  # type: ignore[import-untyped]

    setup(
        name="tabletop-compiled-engines",
        ext_modules=mypycify(paths, group_name=GROUP, opt_level="3"),
        script_args=["build_ext", "--inplace"],
    )
    # build_ext copies an extension it did not need to build again with its old time; the
    # tests take an extension older than its .py for a stale one (a module's code is in the
    # shared library, so its own extension stays as it was when only its imports changed)
    for path in paths:
        for extension in Path(path).parent.glob(Path(path).stem + ".cpython-*.so"):
            extension.touch()


def check_imported() -> None:
    """Every listed module imports as its extension, not its .py (the image's build asks)."""
    modules = compiled_modules()
    python = [m for m in modules if not str(importlib.import_module(m).__file__).endswith(".so")]
    if python:
        raise SystemExit(f"imported from their .py, not compiled: {', '.join(python)}")
    print(f"{len(modules)} engine modules import compiled")


def main(args: list[str]) -> None:
    if args == ["--list"]:
        print("\n".join(compiled_paths()))
    elif args == ["--requirements"]:
        print("\n".join(requirements()))
    elif args == ["--check-imported"]:
        check_imported()
    elif any(arg.startswith("-") for arg in args):
        raise SystemExit(__doc__)
    else:
        compile_in_place(args or compiled_paths())


if __name__ == "__main__":
    main(sys.argv[1:])
