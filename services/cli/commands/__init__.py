"""The ``tabletop`` commands, one module per group; each adds its parsers with ``add_to``."""
