#!/bin/sh
# Prints the interpreter `make install` builds .venv with (override: make PYTHON=...).
#
# Debian's own python3.11 where it is installed with venv and its headers: it is the one the
# image runs (deploy/image/base.sh), and Debian builds it optimised (PGO and LTO, libpython
# linked into the executable). pyenv's default build (the first python3.11 on PATH here) is
# configured without either and runs the rule engines' random playouts 6-10% slower, pure
# Python more (tests/bench/NEXT.md). Elsewhere: the first python3.11 on PATH.
for candidate in /usr/bin/python3.11 python3.11; do
  if "$candidate" -c 'import ensurepip, os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("include"), "Python.h")))' 2>/dev/null; then
    echo "$candidate"
    exit 0
  fi
done
echo python3.11
