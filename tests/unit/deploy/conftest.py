"""Make the ``deploy_support`` helper importable under either pytest import mode
(``prepend`` puts this folder on sys.path itself, ``importlib`` does not)."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
