"""Property tests for rules/acquire.rules: random games keep the rulebook's invariants after every
step (digest section 16), and every legal action applies while illegal ones leave no trace."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulelang import CHANCE, IllegalAction

ROWS = "ABCDEFGHI"
TILES = [f"{c}{r}" for r in ROWS for c in range(1, 13)]
CHAINS = ("Luxor", "Tower", "American", "Festival", "Worldwide", "Continental", "Imperial")
NEIGHBORS = {
    f"{c}{r}": [f"{c + dc}{ROWS[ROWS.index(r) + dr]}"
                for dc, dr in ((0, -1), (-1, 0), (1, 0), (0, 1))
                if 1 <= c + dc <= 12 and 0 <= ROWS.index(r) + dr < len(ROWS)]
    for r in ROWS for c in range(1, 13)
}
NOT_LEGAL = ["buy(Nope)", "", "place(1A", "place(13A)", "dispose(-1, 0)", "found()", "end_buy"]

def check_invariants(s, per_chain: int, hand_size: int) -> None:
    v = {name: s.get_var(name) for name in
         ("bag", "board", "loose", "hand", "removed", "chain_of", "size", "shares", "bank",
          "cash")}
    # Shares are conserved per chain.
    for c in CHAINS:
        assert v["bank"][c] + sum(row[c] for row in v["shares"]) == per_chain, c
        assert v["bank"][c] >= 0 and all(row[c] >= 0 for row in v["shares"])
    # Every one of the 108 tiles is in exactly one place. During the opening the tiles drawn so
    # far are set aside (a flow local) until everyone has drawn.
    aside = []
    if s.current_player == CHANCE and s.chance_outcomes()[0][0].startswith("draw_opening("):
        aside = [h[len("draw_opening("):-1] for h in s.history]
    places = (v["bag"] + v["board"] + v["removed"] + [t for h in v["hand"] for t in h]
              + aside)
    assert sorted(places, key=TILES.index) == TILES
    assert all(len(h) <= hand_size for h in v["hand"])
    assert all(x >= 0 for x in v["cash"])
    # The board: loose tiles are the board tiles in no chain; sizes count chain tiles.
    board = set(v["board"])
    chain_of = v["chain_of"]
    assert all(chain_of[t] is None for t in TILES if t not in board)
    assert set(v["loose"]) == {t for t in board if chain_of[t] is None}
    for c in CHAINS:
        assert v["size"][c] == sum(1 for t in board if chain_of[t] == c), c
        assert v["size"][c] == 0 or v["size"][c] >= 2, c
    # No two different chains touch.
    for t in board:
        if chain_of[t] is not None:
            assert all(chain_of[n] in (None, chain_of[t]) for n in NEIGHBORS[t]), t
    # A loose tile never touches a chain (it would have joined it), except the tile that
    # starts a merger, while the merger is being resolved.
    merging = any(a.startswith(("survivor(", "defunct(", "dispose(")) for a in s.legal_actions())
    touching = [t for t in v["loose"] if any(chain_of[n] is not None for n in NEIGHBORS[t])]
    assert len(touching) <= (1 if merging else 0), touching
    # At the start of a turn every active chain has a holder (digest 8.3 item 5).
    if any(a.startswith(("place(", "pass_place(")) for a in s.legal_actions()):
        for c in CHAINS:
            if v["size"][c] > 0:
                assert any(row[c] > 0 for row in v["shares"]), c


def check_actions(s, rng: random.Random, every: bool) -> None:
    """Legal actions apply on a clone (all of them if `every`, else the first, the last and a
    few at random: a disposal offers up to ~100); illegal ones raise and change nothing."""
    d = s.digest()
    history = list(s.history)
    if s.current_player == CHANCE:
        outcomes = [o for o, _ in s.chance_outcomes()]
        assert outcomes and s.legal_actions() == []
        tried = rng.sample(outcomes, min(3 if every else 1, len(outcomes)))
    else:
        legal = s.legal_actions()
        assert legal and len(set(legal)) == len(legal)
        tried = legal if every or len(legal) <= 8 else (
            [legal[0], legal[-1]] + rng.sample(legal[1:-1], 6))
    for a in tried:
        c = s.clone()
        c.apply(a)
        assert c.history == history + [a]
    assert s.digest() == d
    bad = list(NOT_LEGAL)
    placeable = {a for a in s.legal_actions() if a.startswith("place(")}
    bad += [f"place({t})" for t in ("1A", "12I", rng.choice(TILES)) if f"place({t})" not in
            placeable]
    if s.current_player != CHANCE:
        bad.append("draw_tile(1A)")
    for a in bad:
        with pytest.raises(IllegalAction):
            s.apply(a)
        assert s.history == history
    assert s.digest() == d


def run_random_game(game, n: int, seed: int, every: bool = False) -> None:
    rng = random.Random(seed)
    s = game.new_game(n)
    per_chain = s.get_var("bank")["Luxor"]
    hand_size = 6  # L7
    steps = 0
    while not s.is_terminal():
        check_invariants(s, per_chain, hand_size)
        check_actions(s, rng, every)
        if s.current_player == CHANCE:
            s.apply(rng.choice(s.chance_outcomes())[0])
        else:
            s.apply(rng.choice(s.legal_actions()))
        steps += 1
        assert steps < 20_000, "the game does not end"
    check_invariants(s, per_chain, hand_size)
    assert s.legal_actions() == [] and s.chance_outcomes() == []
    # After the final payout nobody holds shares of a chain on the board.
    sizes = s.get_var("size")
    assert all(row[c] == 0 for row in s.get_var("shares") for c in CHAINS if sizes[c] > 0)
    assert s.winners() and set(s.winners()) <= set(range(n))
    assert max(s.scores()) == s.scores()[s.winners()[0]]


# The loader fixture is memoised, so sharing it across examples is safe.
QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@settings(max_examples=5, deadline=None, suppress_health_check=QUIET, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6))
def test_random_games_keep_invariants(load_rules, seed, n):
    run_random_game(load_rules("acquire"), n, seed)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=QUIET)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6))
def test_random_games_keep_invariants_many(load_rules, seed, n):
    run_random_game(load_rules("acquire"), n, seed, every=True)
