"""Calls between services on long-lived streams (tabletop.v1.Calls, protos/tabletop/v1/
calls.proto): ``channel.CallChannel`` on the caller's side, ``handler.CallsServicer`` on
every internal server, ``groups`` for what both write at the same moment."""
