"""House-rule switches turned both ways: both back ends run, and agree, whatever a user sets.

Issue 7 item 1: an `if` on a parameter that is false, with no `else`, emitted no code and crashed
the compiler. tests/fixtures/switches.rules has such a switch in every place a statement can
stand; every combination of its five switches is played in lock step."""

from __future__ import annotations

import glob
import itertools
import os

import pytest

import rulelang
from tests.conftest import ROOT, RULES
from tests.differential.lockstep import lockstep

SWITCHES = os.path.join(ROOT, "tests", "fixtures", "switches.rules")
NAMES = ["in_flow", "in_phase", "in_option", "in_def", "in_loop"]


@pytest.mark.parametrize("bits", list(itertools.product([False, True], repeat=len(NAMES))),
                         ids=lambda bits: "".join("1" if b else "0" for b in bits))
def test_every_switch_combination(bits):
    params = dict(zip(NAMES, bits))
    for players in (2, 3):
        lockstep(SWITCHES, players, seed=players, params=params)


@pytest.mark.parametrize("variant", [None, "all_on", "all_off"])
def test_switch_variants_compile_and_score(variant):
    game = rulelang.load(SWITCHES, variant=variant, backend="compiled")
    state = game.new_game(2)
    while not state.is_terminal():
        state.apply_index(0)  # always go()
    # Switched off: bonus() is 1 per go(), two rounds -> 2. Switched on, per player and round:
    # pos += 1 (loop) + 10 (phase) + 3 (option) + bonus 4 + only_if 5 = 23, so 46; the shared
    # bank gets 100 + 1 (flow) + 2 per turn (4 turns) + 1 + 2 (while, per round) = 101 + 8 + 6.
    expected = {None: [2, 2], "all_off": [2, 2], "all_on": [46 + 115, 46 + 115]}[variant]
    assert state.scores() == expected


def _bool_flips():
    out = []
    for path in sorted(glob.glob(os.path.join(RULES, "*.rules"))):
        game = rulelang.load(path, backend="interpreter")
        for name, value in sorted(game.params.items()):
            if isinstance(value, bool):
                for n in sorted({game.min_players, game.max_players}):
                    out.append(pytest.param(path, {name: not value}, n,
                                            id=f"{os.path.basename(path)}-{name}-{n}p"))
    return out


@pytest.mark.parametrize(("path", "params", "players"), _bool_flips())
def test_rules_files_with_each_bool_param_flipped(path, params, players):
    lockstep(path, players, seed=players, params=params)
