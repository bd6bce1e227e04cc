"""The compiled playout kernel plays exactly the protocol driver's games (issue 13 item 2).

For every rules file, variant and policy, the kernel (`game.playout`) and rulelang.sim.drive
(one apply_index per step through the engine protocol) start from the same state with the same
seed; they must end with the same digest, history, counts and random-number state (so they drew
the same numbers in the same order). Random programs (tests/randprog) cover the constructs the
rules files do not, faults included.
"""

from __future__ import annotations

import glob
import os
import random

import pytest

import rulelang
from rulelang import RulesRuntimeError, sim
from rulelang.sim import drive, play_random_game, random_playout
from tests.conftest import RULES


def _cases():
    out = []
    for path in sorted(glob.glob(os.path.join(RULES, "*.rules"))):
        game = rulelang.load(path)
        for variant in [None, *game.variants]:
            for n in sorted({game.min_players, game.max_players}):
                out.append(pytest.param(path, variant, n,
                                        id=f"{os.path.basename(path)}-{variant or 'base'}-{n}p"))
    return out


CASES = _cases()
_GAMES: dict = {}


def _compiled(path, variant):
    key = (path, variant)
    if key not in _GAMES:
        _GAMES[key] = rulelang.load(path, variant=variant, backend="compiled")
    return _GAMES[key]


def _both(game, start, seed, policy, max_steps=-1):
    """Run the protocol driver and the kernel from clones of `start`; return both outcomes."""
    out = []
    for runner in (drive, game.playout):
        s = start.clone()
        rng = random.Random(seed)
        try:
            counts = runner(s, rng, policy, max_steps)
            err = None
        except RulesRuntimeError as exc:
            counts, err = None, (exc.message, exc.location)
        try:
            scores = s.scores() if s.is_terminal() else None
        except RulesRuntimeError as exc:  # a random program's score may fault
            scores = (exc.message, exc.location)
        out.append((counts, err, s.digest(), list(s.history), rng.getstate(), scores))
    return out


@pytest.mark.parametrize(("path", "variant", "players"), CASES)
def test_kernel_plays_the_drivers_games(path, variant, players):
    game = _compiled(path, variant)
    finished = 0
    for seed in range(8):
        for policy in ("random_end", "random"):
            a, b = _both(game, game.new_game(players), seed, policy, 4000)
            assert a == b, (seed, policy)
            finished += a[5] is not None
    assert finished >= 8  # whole games, not only their starts


@pytest.mark.parametrize(("path", "variant", "players"), CASES)
def test_kernel_resumes_mid_game_and_stops_after_max_steps(path, variant, players):
    game = _compiled(path, variant)
    whole = game.new_game(players)
    drive(whole, random.Random(5))
    start = game.new_game(players)
    for action in whole.history[:len(whole.history) // 2]:  # half way through a game
        start.apply(action)
    assert not start.is_terminal()
    for seed, steps in ((1, 0), (2, 1), (3, 25), (4, 120)):
        a, b = _both(game, start, seed, "random_end", steps)
        assert a == b
        assert len(a[3]) == len(start.history) + steps or a[5] is not None


@pytest.mark.parametrize(("path", "variant", "players"),
                         [c for c in CASES if c.values[2] == 3 or "acquire" in c.values[0]][:4])
def test_kernel_greedy_policy(path, variant, players):
    game = _compiled(path, variant)
    start = game.new_game(players)
    if start.heuristic() is None:
        with pytest.raises(ValueError, match="unknown playout policy 'greedy'"):
            game.playout(start.clone(), random.Random(0), "greedy")
        return
    for seed in range(2):
        a, b = _both(game, start, seed, "greedy", 150)
        assert a == b
        assert a[0] is not None and a[0][0] > 20  # decisions were taken greedily


def test_acquire_greedy_is_not_random():
    game = _compiled(os.path.join(RULES, "acquire.rules"), None)
    a, b = game.new_game(4), game.new_game(4)
    game.playout(a, random.Random(3), "greedy", 300)
    game.playout(b, random.Random(3), "random_end", 300)
    assert a.history != b.history


def test_unknown_policy_and_engines_without_a_kernel():
    path = os.path.join(RULES, "acquire.rules")
    game = _compiled(path, None)
    with pytest.raises(ValueError, match="unknown playout policy 'best'"):
        game.playout(game.new_game(3), random.Random(1), "best")
    interp = rulelang.load(path)
    assert not hasattr(interp, "playout")
    with pytest.raises(ValueError, match="no playout kernel"):
        random_playout(interp, 3, 1, kernel=True)
    # without a kernel the protocol driver plays the same game the kernel plays
    s_interp, d1, c1 = random_playout(interp, 3, 1)
    s_comp, d2, c2 = random_playout(game, 3, 1)
    assert (s_interp.digest(), d1, c1) == (s_comp.digest(), d2, c2)


def test_play_random_game_results_equal_with_and_without_the_kernel():
    game = _compiled(os.path.join(RULES, "polanaftowe.rules"), None)
    for seed in (11, 12):
        assert play_random_game(game, 4, seed, kernel=True) == \
            play_random_game(game, 4, seed, kernel=False)


def test_kernel_on_random_programs():
    """Generated programs (faults, secret choices, weights, finish, ...) on the kernel."""
    from rulelang.codegen import load_compiled
    from tests.randprog.gen import generate

    played = faults = unlimited = unlimited_faults = 0
    for seed in range(40):
        case = generate(seed)
        for config in case.configs[:1]:
            try:
                program = rulelang.check_text(case.text, "random.rules", config.get("variant"),
                                              config.get("params") or {})
                game = load_compiled(program)
                start = game.new_game(config["players"])
            except (rulelang.RulesError, RulesRuntimeError):
                continue
            for s in range(2):
                a, b = _both(game, start, s, "random_end", 600)
                assert a == b, (seed, config)
                played += 1
                faults += a[1] is not None
                if a[1] is not None or a[5] is not None:
                    # it ends within 600 steps: the same with no limit (the kernel's own loop)
                    c, d = _both(game, start, s, "random_end")
                    assert c == d == a, (seed, config)
                    unlimited += 1
                    unlimited_faults += a[1] is not None
    assert played >= 40 and unlimited >= 30
    # faults inside the kernel restore the state as the protocol does (both loops)
    assert faults >= 3 and unlimited_faults >= 3


class _CountingRandom(random.Random):
    """A Random of another class: the kernel calls its randrange (no inline draw)."""

    def __init__(self, seed):
        super().__init__(seed)
        self.calls = 0

    def randrange(self, *args):
        self.calls += 1
        return super().randrange(*args)


def test_kernel_draws_through_randrange_of_other_random_classes():
    """A plain random.Random is drawn from inline (getrandbits, as its randrange does), any
    other class through its own randrange: the same games either way."""
    game = _compiled(os.path.join(RULES, "acquire.rules"), None)
    plain, other = game.new_game(4), game.new_game(4)
    rng, plain_rng = _CountingRandom(11), random.Random(11)
    steps = game.playout(plain, plain_rng, "random_end", 400)
    assert game.playout(other, rng, "random_end", 400) == steps
    assert plain.is_terminal()
    assert rng.calls == sum(steps) - 1 == 354  # the end declaration is taken without a draw
    assert plain.digest() == other.digest()
    assert plain.history == other.history
    assert rng.getstate() == plain_rng.getstate()


def test_protocol_driver_draws_inline_as_randrange_does(monkeypatch):
    """sim._drive_random draws randrange(n) inline from a plain random.Random: the games, the
    digests after every step and the rng's state are those of the drawing through randrange."""
    game = _compiled(os.path.join(RULES, "acquire.rules"), None)
    inline_digests: list[str] = []
    plain_digests: list[str] = []
    inline, plain = game.new_game(4), game.new_game(4)
    inline_rng, plain_rng = random.Random(5), random.Random(5)
    assert sim.PLAIN_RANDBELOW  # this Python draws as the inline code does
    inline_steps = sim._drive_random(game, inline, inline_rng, inline_digests)
    monkeypatch.setattr(sim, "PLAIN_RANDBELOW", False)
    plain_steps = sim._drive_random(game, plain, plain_rng, plain_digests)
    assert inline_steps == plain_steps
    assert inline_digests == plain_digests and len(inline_digests) == sum(inline_steps)
    assert inline.history == plain.history
    assert inline_rng.getstate() == plain_rng.getstate()
