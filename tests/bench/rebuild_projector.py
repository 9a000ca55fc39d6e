"""A second projector over the same topics with a fresh Faust app id (so a fresh consumer
group, fresh tables and changelog): a full read-model rebuild from offset 0.

``python -m tests.bench.rebuild_projector APP_ID`` with the projector's TABLETOP_*
environment. It is the production projector unchanged except for its app id.
"""

from __future__ import annotations

import sys

import services.projector.app as projector
from services.common.config import Config
from services.common.logging import configure_logging


def main() -> None:
    app_id = sys.argv[1]
    vars(projector)["PROJECTOR_APP_ID"] = app_id  # read by create_app for the app id
    sys.argv = sys.argv[:1]
    config = Config.from_env("projector")
    configure_logging("projector", config.log_level)
    projector.main(config)


if __name__ == "__main__":
    main()
