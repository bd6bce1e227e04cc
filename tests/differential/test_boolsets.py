"""Sets of bool (tests/fixtures/boolsets.rules): declared in state, inferred in locals, as
option domains and def results; the same JSON, digests, legal actions and scores on both back
ends (the compiled engine keeps them as two-bit masks, and once wrote their JSON as [0, 1])."""

from __future__ import annotations

import json
import os

import pytest

import rulelang
from tests.conftest import ROOT
from tests.differential.lockstep import lockstep

BOOLSETS = os.path.join(ROOT, "tests", "fixtures", "boolsets.rules")


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_bool_sets_in_lock_step(players, seed):
    lockstep(BOOLSETS, players, seed)


def test_bool_sets_json_set_vars_and_play(backend):
    s = rulelang.load(BOOLSETS, backend=backend).new_game(2)
    obj = json.loads(s.to_json())
    assert obj["vars"]["both"] == [False, True] and obj["vars"]["seen"] == []
    assert obj["locals"]["mine"] == [True] and obj["locals"]["offered"] == [True]
    assert s.legal_actions() == ["pick(true)", "drop(false)", "drop(true)", "keep()"]
    s.apply("drop(true)")  # both = {false}; mine = {false}
    assert s.get_var("both") == [False]
    # offered = flips({}) + {false}; drop is no longer legal with one member left
    assert s.legal_actions() == ["pick(false)", "keep()"]
    # offered is a local worked out before the decision: setting seen does not change it
    s.set_vars({"seen": [True, False]})
    assert s.get_var("seen") == [False, True]
    assert s.legal_actions() == ["pick(false)", "keep()"]
    s.apply("pick(false)")
    assert s.is_terminal()
    # false in seen and true not in both: +10 to player 0; log = [false] + both's [false]
    assert s.get_var("log") == [False, False]
    assert s.get_var("seen") == [False, True]
    assert s.scores() == [12, 3]
