"""Bots that play any game through its public contract, deciding from a seat's view.

``levels`` names the strengths a lobby offers (``easy``, ``medium``, ``hard``); ``search``
holds the information-set search behind the stronger ones. Nothing here is part of a
rules engine: a bot receives what a seat is served (its view and its legal actions) and
runs the game's own engine only on states it sampled from that view.
"""
