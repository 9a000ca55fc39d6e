"""Adapters between the pure engines and the platform's protobuf messages."""

from __future__ import annotations

import functools
from typing import Any

from services.adapters.protoconv import GameMessages, fill
from services.games.contract import (
    ActionTemplate,
    AwaitingChance,
    AwaitingPlayers,
    Described,
    DrawCards,
    Finished,
    Game,
    ParamRange,
    RollDice,
    ShuffleDeck,
    Step,
)
from services.games.registry import get_game
from tabletop.v1 import games_pb2, match_pb2


@functools.cache
def messages_for(game_name: str) -> GameMessages:
    return GameMessages(get_game(game_name))


def game_and_messages(game_name: str) -> tuple[Game[Any], GameMessages]:
    messages = messages_for(game_name)
    return messages.game, messages


def describe_chance(step: AwaitingChance) -> str:
    request = step.request
    match request:
        case RollDice(count=c, sides=s, purpose=p):
            return f"roll {c}d{s} ({p})"
        case ShuffleDeck(deck=d, cards=cards, purpose=p):
            return f"shuffle {len(cards)} cards into {d} ({p})"
        case DrawCards(deck=d, count=c, purpose=p):
            return f"draw {c} from {d} ({p})"
    return str(request)


def next_step_message(step: Step) -> match_pb2.NextStep:
    if isinstance(step, AwaitingPlayers):
        return match_pb2.NextStep(players=step.players, phase=step.phase)
    if isinstance(step, AwaitingChance):
        return match_pb2.NextStep(chance=describe_chance(step))
    assert isinstance(step, Finished)
    return match_pb2.NextStep(finished=True)


def action_to_game_action(game_name: str, action: Any) -> games_pb2.GameAction:
    wrapper = games_pb2.GameAction()
    messages_for(game_name).fill_action(getattr(wrapper, game_name), action)
    return wrapper


def action_from_game_action(game_name: str, wrapper: games_pb2.GameAction) -> Any:
    """Raises ValueError for an action of another game or an empty one."""
    which = wrapper.WhichOneof("game")
    if which != game_name:
        raise ValueError(f"this match plays {game_name}, not {which or 'nothing'}")
    return messages_for(game_name).action_from_message(getattr(wrapper, game_name))


def fill_game_view(wrapper: games_pb2.GameView, game_name: str, view: Any) -> games_pb2.GameView:
    """Set ``view`` in ``wrapper`` in place (e.g. a MatchView's ``game_view``): passing a
    filled GameView to a message's constructor copies the whole view (~15% of filling it)."""
    fill(getattr(wrapper, game_name), view)
    return wrapper


def legal_action_message(
    game: Game[Any], entry: Any, view: Any | None = None
) -> match_pb2.LegalAction:
    """One entry of ``legal_actions`` on the wire: a concrete action, or an
    ``ActionTemplate`` as its example with the ranges of its free fields in ``params``.
    Described as the player whose ``view`` this is sees it (``Game.describe``); without a
    view, by ``describe_action`` alone."""
    example = entry.example if isinstance(entry, ActionTemplate) else entry
    if view is None:
        described = Described(game.describe_action(example))
    else:
        described = game.describe(view, example)
    message = match_pb2.LegalAction(
        action=action_to_game_action(game.name, example),
        label=described.label,
        targets=described.targets,
        affects=described.affects,
    )
    if isinstance(entry, ActionTemplate):
        for r in entry.ranges:
            param = message.params.add(name=r.name, low=r.low, high=r.high, unit=r.unit)
            axis = described.axes.get(r.name)
            if axis is not None:
                param.picture.measure = axis.measure
                param.picture.scale = axis.scale
                param.picture.offset = axis.offset
    return message


def legal_action_messages(game: Game[Any], state: Any, player: str) -> list[match_pb2.LegalAction]:
    """``player``'s legal actions in ``state`` on the wire, described from their view."""
    entries = game.legal_actions(state, player)
    if not entries:
        return []
    view = game.view(state, player)
    return [legal_action_message(game, entry, view) for entry in entries]


def legal_entry(game_name: str, legal: match_pb2.LegalAction) -> Any:
    """``legal_action_message`` undone: the concrete action or the ``ActionTemplate``."""
    action = action_from_game_action(game_name, legal.action)
    if not legal.params:
        return action
    ranges = tuple(ParamRange(p.name, p.low, p.high, p.unit) for p in legal.params)
    return ActionTemplate(action, ranges)


def chosen_action(game: Game[Any], action: Any) -> match_pb2.LegalAction:
    """A concrete action (e.g. a filled-in template) as the entry a client submits."""
    return match_pb2.LegalAction(
        action=action_to_game_action(game.name, action), label=game.describe_action(action)
    )
