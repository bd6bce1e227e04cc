"""tests/fixtures/passes.rules: the code generator's sharing passes (rulelang/codegen/passes.py)
in lock step on both back ends, faults included (same message and .rules location, state
kept), and the generated module really uses them."""

from __future__ import annotations

import os
import random

import pytest

import rulelang
from rulelang.codegen import compile_program
from tests.conftest import ROOT
from tests.differential.lockstep import snapshot

PASSES = os.path.join(ROOT, "tests", "fixtures", "passes.rules")


def _play(players: int, seed: int) -> tuple[int, str | None]:
    """One random game on both back ends in lock step; a rules fault must be the same on both
    and leave both states as they were. Returns (steps, fault location or None)."""
    a = rulelang.load(PASSES, backend="interpreter").new_game(players)
    b = rulelang.load(PASSES, backend="compiled").new_game(players)
    rng = random.Random(seed)
    for step in range(2000):
        assert snapshot(a) == snapshot(b), f"seed {seed} step {step}"
        if a.is_terminal():
            return step, None
        k = rng.randrange(a.num_choices())
        before = a.digest()
        errs = []
        for s in (a, b):
            try:
                s.apply_index(k)
                errs.append(None)
            except rulelang.RulesRuntimeError as exc:
                errs.append((exc.message, exc.location))
        assert errs[0] == errs[1], f"seed {seed} step {step}: {errs}"
        if errs[0] is not None:
            assert a.digest() == b.digest() == before
            return step, errs[0][1]
    raise AssertionError("no end")


@pytest.mark.parametrize("players", [2, 3])
def test_shared_any_in_lockstep(players):
    ends = {}
    for seed in range(40):
        _steps, where = _play(players, seed)
        ends[where] = ends.get(where, 0) + 1
    # some games end normally, others at the price table's miss inside can_buy's `any`,
    # raised by the `while` test (the decision after it never evaluates it first)
    assert ends.get(None, 0) > 0
    faults = {os.path.basename(w) for w in ends if w is not None}
    assert faults == {"passes.rules:23:49"}  # price(stock[g]) in can_buy


def test_shared_any_is_used():
    """Both decisions after a test with a matching `any` get its members (plan_shared_any)."""
    src = compile_program(rulelang.check_file(PASSES))
    assert "def legal_buy(s, known=None):" in src
    assert "def legal_take(s, known=None):" in src
    assert "acts = legal_buy(s, _t" in src
    assert "acts = legal_take(s, _t" in src
