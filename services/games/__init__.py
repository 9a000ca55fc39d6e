"""Pure game engines: rules only, no I/O. See contract.py for the shape every game follows."""
