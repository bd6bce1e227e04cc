"""tests/fixtures/flow.rules (the control-flow constructs of docs/language.md) in lock step on
both back ends, at every player count, from scripted and random choices."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.differential.lockstep import lockstep

FLOW = os.path.join(ROOT, "tests", "fixtures", "flow.rules")


@pytest.mark.parametrize("players", [2, 3, 4])
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1), choices=st.lists(st.integers(0, 10**6), max_size=40))
def test_flow_constructs_in_lockstep(players, seed, choices):
    lockstep(FLOW, players, seed, choices=choices)


@pytest.mark.parametrize("rounds", [1, 5])
def test_flow_constructs_longer_games(rounds):
    for seed in range(4):
        lockstep(FLOW, 2 + seed % 3, seed, params={"rounds": rounds})
