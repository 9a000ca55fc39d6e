"""Information-set search: sample the hidden part of a state from a seat's view
(``determinization``), play the seat's candidate actions out over the samples with the
game's own engine and bots, and keep the one that wins most (``rollouts``), within a
CPU-time budget (``budget``)."""
