"""A second projector over the same topics with a fresh Faust app id (so a fresh consumer
group, fresh tables and changelog): a full read-model rebuild from offset 0.

``python -m tests.bench.rebuild_projector APP_ID`` with the projector's TABLETOP_*
environment, as the broker's admin (TABLETOP_KAFKA_USERNAME and _PASSWORD): the
projector's user may use only its own app id's group and topics. It is the production
projector unchanged except for its app id, and that it declares its new app id's topics
(its changelog and leader topics), which admin may.
"""

from __future__ import annotations

import sys

import services.projector.app as projector
from services.common.config import Config
from services.common.logging import configure_logging


def main() -> None:
    app_id = sys.argv[1]
    vars(projector)["projector_group"] = lambda prefix: app_id  # create_app's app id
    settings = projector.settings
    vars(projector)["settings"] = lambda *args: {**settings(*args), "topic_allow_declare": True}
    sys.argv = sys.argv[:1]
    config = Config.from_env("projector")
    configure_logging("projector", config.log_level)
    projector.main(config)


if __name__ == "__main__":
    main()
