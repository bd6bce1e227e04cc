"""Interpreter and compiled engines agree step by step on every rules file and variant."""

from __future__ import annotations

import glob
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rulelang
from tests.conftest import RULES
from tests.differential.lockstep import lockstep


def _cases(mid: bool = False):
    """Every file and variant at its least and most players (and, with mid, the count halfway:
    4 for 2-6 player games). A variant that sets every parameter to its default is the base
    program again and is not played twice."""
    out = []
    for path in sorted(glob.glob(os.path.join(RULES, "*.rules"))):
        game = rulelang.load(path)
        for variant in [None, *game.variants]:
            if variant is not None and rulelang.load(path, variant=variant).params == game.params:
                continue  # the variant only names the defaults (Power Grid's benelux): the
                # same program as the base rules, played there
            # Every player count of a narrow range (Automobile, Pola Naftowe: 3, 4 and 5),
            # else the two ends (and, with mid, the count halfway: 4 for 2-6 player games).
            span = range(game.min_players, game.max_players + 1)
            counts = set(span) if len(span) <= 3 else {game.min_players, game.max_players}
            if mid:
                counts.add((game.min_players + game.max_players) // 2)
            for n in sorted(counts):
                out.append(pytest.param(path, variant, n,
                                        id=f"{os.path.basename(path)}-{variant or 'base'}-{n}p"))
    return out


CASES = _cases()
CASES_LONG = _cases(mid=True)


@pytest.mark.parametrize(("path", "variant", "players"), CASES)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1), choices=st.lists(st.integers(0, 10**6), max_size=40))
def test_lockstep(path, variant, players, seed, choices):
    lockstep(path, players, seed, variant=variant, choices=choices)


@pytest.mark.slow
@pytest.mark.parametrize(("path", "variant", "players"), CASES_LONG)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1), choices=st.lists(st.integers(0, 10**6), max_size=200))
def test_lockstep_long(path, variant, players, seed, choices):
    lockstep(path, players, seed, variant=variant, choices=choices)


@pytest.mark.parametrize(("path", "variant", "players"), CASES[:4])
def test_records_cross_replay(path, variant, players):
    """A record made on one back end replays on the other with equal digests."""
    a = rulelang.load(path, variant=variant, backend="interpreter")
    b = rulelang.load(path, variant=variant, backend="compiled")
    for maker, other in ((a, b), (b, a)):
        from rulelang.sim import play_random_game

        rec = play_random_game(maker, players, 7, record=True, variant=variant).record
        s = other.new_game(players)
        for action, digest in zip(rec["actions"], rec["digests"]):
            s.apply(action)
            assert s.digest() == digest
        assert s.scores() == rec["scores"]
