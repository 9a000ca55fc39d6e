"""The RPCs of tabletop.v1.Gateway by area of the API: lobby, play, views, history
(replay, export, verify) and standings. Each is a plain async function of
``(request, call)`` that returns its reply or raises ``Refused``; the edge
(services/gateway/edge.py) serves them, and services/gateway/service.py lists them."""
