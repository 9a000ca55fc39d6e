"""The state's phases and chain stages as constants of the compiled rules.

From compiled code, ``Phase.OVER`` is a look-up of ``Phase`` in the module's globals, then
of the member through the enum's metaclass and its ``__getattr__`` hook, at every
comparison of every step; a ``Final`` class attribute of a compiled module is a C static.
The values are the members themselves: states and events hold what they held before.
The rules compare a state's phase and stage with them by identity (``is``: a pointer
comparison, where ``==`` is a call comparing strings): states hold the members, as folds
put them there and the codec and the bots' sampling rebuild them with ``Phase(...)`` and
``Stage(...)`` (test_im_stages.py).
"""

from __future__ import annotations

from typing import Final

from services.games.imperial_miners.state import Phase, Stage


class Phases:
    SETUP: Final = Phase.SETUP
    KEEP: Final = Phase.KEEP
    EVENT: Final = Phase.EVENT
    CHOOSE: Final = Phase.CHOOSE
    MINE: Final = Phase.MINE
    OVER: Final = Phase.OVER


class Stages:
    PLACE: Final = Stage.PLACE
    EFFECT: Final = Stage.EFFECT
    CLIMB: Final = Stage.CLIMB
    SURFACE: Final = Stage.SURFACE
    FINISHING: Final = Stage.FINISHING
    DONE: Final = Stage.DONE
