"""Sealed choices stay out of other players' observations, history and records until revealed."""

from __future__ import annotations

import json

import pytest

import rulelang
from rulelang.sim import player_record

SEALED = """game Sealed
players 3..3
state {
  bid: int[player] private = 0
  hand: int[player] private = 0
  shown: int[player] = 0
}
flow {
  for p in players {
    chance card(c: int in 1..3) seen by p
    hand[p] = c
    choose p secret { bid(x: int in 1..3) { bid[p] = x } }
  }
  shown = bid
  reveal bid
  choose players[0] { done() { } }
}
score p => shown[p] + hand[p]
"""


@pytest.fixture
def sealed(backend):
    return rulelang.load_text(SEALED, "sealed.rules", backend=backend)


def test_sealed_bids_hidden_until_reveal(sealed):
    s = sealed.new_game(3)
    for a in ["card(1)", "bid(2)", "card(2)", "bid(3)", "card(3)"]:
        s.apply(a)
    # Before the reveal: each player sees only its own card and bid.
    assert s.observation(1)["history"] == ["?", "?", "card(2)", "bid(3)", "?"]
    assert s.observation(0)["history"] == ["card(1)", "bid(2)", "?", "?", "?"]
    obs = s.observation(2)
    assert obs["vars"]["bid"] == [None, None, 0] and obs["vars"]["shown"] == [0, 0, 0]
    rec = player_record(sealed, s, 2)
    assert rec["actions"] == ["?", "?", "?", "?", "card(3)"]
    assert json.dumps(rec["observation"]["vars"]).count("null") == 4  # others' bid and hand
    assert "digests" not in rec
    s.apply("bid(1)")
    # After `reveal bid`: every bid is public history; private draws stay private.
    for p in range(3):
        hist = s.observation(p)["history"]
        assert [hist[i] for i in (1, 3, 5)] == ["bid(2)", "bid(3)", "bid(1)"]
        assert [h == "?" for h in (hist[0], hist[2], hist[4])] == [p != 0, p != 1, p != 2]
        assert s.observation(p)["vars"]["shown"] == [2, 3, 1]
    assert player_record(sealed, s, 1)["actions"][5] == "bid(1)"


def test_observation_without_history(sealed):
    # history=False leaves only the history out (the RL adapters' observations)
    s = sealed.new_game(3)
    for a in ["card(1)", "bid(2)", "card(2)"]:
        s.apply(a)
    for p in range(3):
        full = s.observation(p)
        short = s.observation(p, history=False)
        assert "history" not in short
        del full["history"]
        assert short == full
    assert "legal_actions" in s.observation(1, history=False)  # player 1 is to bid
    with pytest.raises(ValueError, match="the viewer must be a player"):
        s.observation(3, history=False)


def test_reveal_only_names_secret_actions():
    bad = SEALED.replace("reveal bid", "reveal done")
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(bad, "sealed.rules")
    d = err.value.diagnostics[0]
    assert (d.code, d.span.line, d.span.col) == ("E010", 15, 3)
    assert d.message == "undefined secret action or hidden draw 'done'"


@pytest.mark.parametrize("viewer, shown", [
    (rulelang.CHANCE, "CHANCE"), (rulelang.TERMINAL, "TERMINAL"), (3, "3"), (-7, "-7"),
    (True, "True"), ("0", "'0'"), (None, "None")])
def test_only_a_player_may_view(sealed, viewer, shown):
    """Issue 7 item 9: CHANCE or TERMINAL as a viewer saw `seen by none` outcomes and player 0's
    secret choices (a driver calling s.observation(s.current_player) at a chance node)."""
    s = sealed.new_game(3)
    s.apply("card(1)")
    s.apply("bid(2)")
    assert s.current_player == rulelang.CHANCE
    message = f"the viewer must be a player, 0..2, not {shown}"
    with pytest.raises(ValueError) as exc:
        s.observation(viewer)
    assert str(exc.value) == message
    with pytest.raises(ValueError) as exc:
        s.history_for(viewer)
    assert str(exc.value) == message
    with pytest.raises(ValueError):
        s.observation(s.current_player)
    assert s.history_for(1) == ["?", "?"]
    for a in ["card(2)", "bid(3)", "card(3)", "bid(1)", "done()"]:
        s.apply(a)
    assert s.is_terminal()
    with pytest.raises(ValueError, match="not TERMINAL"):
        s.observation(s.current_player)


ROUNDS = """game Rounds
players 2..3
state {
  got: int[player] private = 0
  rounds: int = 0
}
flow {
  while rounds < 4 {
    rounds += 1
    for p in players {
      chance deal(c: int in 1..3) seen by p
      chance tip(t: int in 1..2) seen by p
      choose p secret {
        bid(x: int in 1..3) { got[p] += x }
        pass() { }
      }
    }
    if rounds % 2 == 0 {
      reveal deal
    }
    reveal bid
  }
}
score p => got[p]
"""


def _histories_in_lockstep(games, players: int, seed: int) -> int:
    """One random game on both back ends; every player's history compared at every step, and
    now and then both games go on as their clones, after the originals have played a few
    steps of their own (as a search does with the states it copies). Returns the number of
    steps."""
    import random

    def step(a, b, rng):
        if a.current_player == rulelang.CHANCE:
            action = rng.choice([x for x, _w in a.chance_outcomes()])
        else:
            action = rng.choice(a.legal_actions())
        a.apply(action)
        b.apply(action)

    a, b = (g.new_game(players) for g in games)
    rng = random.Random(seed)
    steps = 0
    while not a.is_terminal():
        for p in range(players):
            assert a.history_for(p) == b.history_for(p), (seed, steps, p)
        if rng.random() < 0.1:
            ca, cb = a.clone(), b.clone()
            for _ in range(4):
                if not a.is_terminal():
                    step(a, b, rng)
            a, b = ca, cb
        step(a, b, rng)
        steps += 1
    for p in range(players):
        assert a.history_for(p) == b.history_for(p), (seed, steps, p)
    return steps


@pytest.mark.parametrize("players", [2, 3])
def test_reveals_agree_on_both_back_ends(players):
    """Secret choices revealed every round (`pass` never: its entries stay hidden), draws
    revealed every other round (`tip` never): the compiled engine lists the entries a reveal
    may make public (codegen.passes.plan_hidden); clones carry the lists."""
    games = [rulelang.load_text(ROUNDS, "rounds.rules", backend=be)
             for be in ("interpreter", "compiled")]
    for seed in range(12):
        _histories_in_lockstep(games, players, seed)
    s = games[1].new_game(2)
    for a in ["deal(1)", "tip(1)", "bid(2)", "deal(2)", "tip(2)", "pass()"]:
        s.apply(a)
    assert s.history_for(1) == ["?", "?", "bid(2)", "deal(2)", "tip(2)", "pass()"]
    for a in ["deal(3)", "tip(1)", "pass()", "deal(1)", "tip(1)", "bid(1)"]:
        s.apply(a)
    assert s.history_for(1) == ["deal(1)", "?", "bid(2)", "deal(2)", "tip(2)", "pass()",
                                "deal(3)", "?", "?", "deal(1)", "tip(1)", "bid(1)"]


@pytest.mark.parametrize("name", ["poder", "polanaftowe", "automobile"])
def test_reveals_of_the_rules_files_agree_on_both_back_ends(name):
    from tests.conftest import RULES

    path = f"{RULES}/{name}.rules"
    games = [rulelang.load(path, backend=be) for be in ("interpreter", "compiled")]
    for seed in range(2):
        assert _histories_in_lockstep(games, 3, seed) > 20
