"""Simulator and CLI tests against a small fake engine, independent of the language core."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import random
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import rulelang
from rulelang import sim
from rulelang.cli import DEFAULT_BACKEND, cli, parse_value

try:
    from rulelang.errors import Diagnostic, IllegalAction, RulesError, Span
except ImportError:  # the core is optional for these tests
    Diagnostic = RulesError = Span = None  # type: ignore[assignment,misc]

    class IllegalAction(Exception):  # type: ignore[no-redef]
        pass


REPO = Path(__file__).resolve().parent.parent
ACQUIRE = REPO / "rules" / "acquire.rules"

# ---------------------------------------------------------------------------- fake engine
# Each round every player picks a number 1..3 in turn (picks hidden until the die), then a
# die is rolled: a player whose pick equals (die - 1) % 3 + 1 scores 10 plus the pick.
# Player 0 may declare the end from round 2 on when allow_end is set.

FAKE_PARAMS = {"rounds": 2, "allow_end": False, "fault": False, "slow_roll": 0}
FAKE_VARIANTS = ["loaded", "rigged"]
WEIGHTS = {"loaded": [1, 1, 1, 1, 1, 5], "rigged": [0, 0, 0, 0, 0, 1]}


class TwoArgError(Exception):
    """Like RulesRuntimeError: its pickled args cannot rebuild it."""

    def __init__(self, message: str, location: str) -> None:
        super().__init__(f"{location}: {message}")


class FakeGame:
    name = "Fake"
    min_players = 2
    max_players = 3
    variants = FAKE_VARIANTS
    end_actions = frozenset({"declare_end"})

    def __init__(self, text: str, variant: str | None, params: dict[str, Any]) -> None:
        self.source_digest = hashlib.sha256(text.encode()).hexdigest()
        self.variant = variant
        self.params = params

    def new_game(self, num_players: int) -> FakeState:
        if not self.min_players <= num_players <= self.max_players:
            raise ValueError(f"Fake takes 2 to 3 players, not {num_players}")
        return FakeState(self, num_players)


class FakeState:
    def __init__(self, game: FakeGame, num_players: int) -> None:
        self.game = game
        self.num_players = num_players
        self.round = 1
        self.picks: list[int] = []
        self.score = [0] * num_players
        self.ended = False
        self.history: list[str] = []

    @property
    def current_player(self) -> int:
        if self.ended or self.round > self.game.params["rounds"]:
            return sim.TERMINAL
        if len(self.picks) == self.num_players:
            return sim.CHANCE
        return len(self.picks)

    def is_terminal(self) -> bool:
        return self.current_player == sim.TERMINAL

    def legal_actions(self) -> list[str]:
        if self.current_player < 0:
            return []
        acts = [f"pick({n})" for n in (1, 2, 3)]
        if self.game.params["allow_end"] and self.round >= 2 and self.current_player == 0:
            acts.append("declare_end()")
        return acts

    def chance_weights(self) -> list[int] | None:
        return WEIGHTS.get(self.game.variant)  # type: ignore[arg-type]

    def chance_outcomes(self) -> list[tuple[str, Fraction]]:
        w = self.chance_weights() or [1] * 6
        return [(f"roll({d})", Fraction(w[d - 1], sum(w))) for d in range(1, 7)]

    def num_choices(self) -> int:
        if self.current_player == sim.CHANCE:
            return 6
        return len(self.legal_actions())

    def _choices(self) -> list[str]:
        if self.current_player == sim.CHANCE:
            return [a for a, p in self.chance_outcomes() if p > 0]
        return self.legal_actions()

    def apply(self, action: str) -> None:
        if action not in self._choices():
            raise IllegalAction(f"{action!r} is not legal now")
        self.history.append(action)
        arg = action[action.index("(") + 1 : -1]
        if action.startswith("declare_end"):
            self.ended = True
        elif action.startswith("pick"):
            self.picks.append(int(arg))
        else:
            if self.game.params["fault"]:
                if int(arg) == self.game.params["slow_roll"]:
                    time.sleep(1.0)  # this roll faults late (a long game, say)
                raise TwoArgError("die table has no entry", "fake.rules:3:1")
            target = (int(arg) - 1) % 3 + 1
            for p, pick in enumerate(self.picks):
                if pick == target:
                    self.score[p] += 10 + pick
            self.picks = []
            self.round += 1

    def apply_index(self, k: int) -> None:
        if self.current_player == sim.CHANCE:
            self.apply(self.chance_outcomes()[k][0])
        else:
            self.apply(self.legal_actions()[k])

    def scores(self) -> list[int]:
        return list(self.score)

    def winners(self) -> list[int]:
        best = max(self.score)
        return [p for p, s in enumerate(self.score) if s == best]

    def observation(self, p: int) -> dict[str, Any]:
        return {
            "round": self.round,
            "you": p,
            "my_pick": self._my_pick(p),
            "scores": self.score,
            "picked": len(self.picks),
        }

    def _my_pick(self, p: int) -> int | None:
        return self.picks[p] if p < len(self.picks) else None

    def to_json(self) -> str:
        data = {"round": self.round, "picks": self.picks, "score": self.score, "ended": self.ended}
        return json.dumps(data, sort_keys=True)

    def digest(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    def clone(self) -> FakeState:
        other = FakeState(self.game, self.num_players)
        other.__dict__.update(
            round=self.round,
            picks=list(self.picks),
            score=list(self.score),
            ended=self.ended,
            history=list(self.history),
        )
        return other


def fake_load(
    path: Any,
    variant: str | None = None,
    params: dict[str, Any] | None = None,
    backend: str = "interpreter",
) -> FakeGame:
    """Stands in for rulelang.load; top level so worker processes can unpickle it."""
    text = Path(path).read_text(encoding="utf-8")
    if "syntax error" in text:
        if RulesError is None:
            raise ValueError(f"{path}:1:1: syntax error")
        raise RulesError([Diagnostic("E001", "syntax error", Span(str(path), 1, 1))], text)
    if variant is not None and variant not in FAKE_VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    effective = dict(FAKE_PARAMS)
    for name, value in (params or {}).items():
        if name not in effective:
            raise ValueError(f"unknown parameter {name!r}")
        effective[name] = value
    return FakeGame(text, variant, effective)


@pytest.fixture
def fake_file(tmp_path: Path) -> Path:
    path = tmp_path / "fake.rules"
    path.write_text("game Fake\n", encoding="utf-8")
    return path


def run_cli(args: list[str], input: str | None = None) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args], obj={"loader": fake_load}, input=input)


def deterministic(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "timing"}


# ---------------------------------------------------------------------------- driver


class ScriptedRng:
    """An RNG stand-in that returns preset randrange values and checks the bound asked for."""

    def __init__(self, *draws: tuple[int, int]) -> None:
        self.draws = list(draws)

    def randrange(self, n: int) -> int:
        bound, value = self.draws.pop(0)
        assert n == bound
        return value


def test_game_seed_is_sha256_prefix_and_stable() -> None:
    expected = int.from_bytes(hashlib.sha256(b"7:3").digest()[:8], "big")
    assert sim.game_seed(7, 3) == expected
    seeds = {sim.game_seed(0, i) for i in range(1000)}
    assert len(seeds) == 1000
    assert all(0 <= s < 2**64 for s in seeds)


def test_weighted_index_maps_every_draw_exactly() -> None:
    weights = [0, 3, 1, 0, 2]
    expected = [1, 1, 1, 2, 4, 4]
    for r, k in enumerate(expected):
        assert sim.weighted_index(ScriptedRng((6, r)), weights) == k


def test_weighted_index_frequencies_and_errors() -> None:
    rng = random.Random(1)
    counts = [0, 0, 0]
    for _ in range(4000):
        counts[sim.weighted_index(rng, [1, 0, 3])] += 1
    assert counts[1] == 0
    assert 850 < counts[0] < 1150
    with pytest.raises(ValueError):
        sim.weighted_index(rng, [0, 0])
    with pytest.raises(ValueError):
        sim.weighted_index(rng, [])


def test_wilson_interval_known_values() -> None:
    low, high = sim.wilson_interval(50, 100)
    assert (round(low, 4), round(high, 4)) == (0.4038, 0.5962)
    low, high = sim.wilson_interval(0, 10)
    assert low == 0.0 and round(high, 4) == 0.2775
    low, high = sim.wilson_interval(2.5, 10)  # fractional wins from ties
    assert 0.0 < low < 0.25 < high < 1.0
    assert sim.wilson_interval(0, 0) == (0.0, 1.0)


def test_play_random_game_is_deterministic(fake_file: Path) -> None:
    game = fake_load(fake_file)
    first = sim.play_random_game(game, 2, seed=42, record=True)
    again = sim.play_random_game(game, 2, seed=42, record=True)
    assert first == again
    assert first.decisions == 4 and first.chance_events == 2
    histories = {
        tuple(sim.play_random_game(game, 2, seed=s, record=True).record["actions"])
        for s in range(20)
    }
    assert len(histories) > 1


def test_record_replays_to_same_digests(fake_file: Path) -> None:
    game = fake_load(fake_file, params={"rounds": 4})
    res = sim.play_random_game(game, 3, seed=5, record=True, file="x.rules", params={"rounds": 4})
    rec = res.record
    assert rec is not None
    assert rec["rulelang_record"] == 1 and rec["file"] == "x.rules"
    assert rec["params"] == {"rounds": 4} and rec["players"] == 3 and rec["seed"] == 5
    assert len(rec["actions"]) == len(rec["digests"]) == res.decisions + res.chance_events
    state = game.new_game(3)
    for action, digest in zip(rec["actions"], rec["digests"], strict=True):
        state.apply(action)
        assert state.digest() == digest
    assert rec["scores"] == state.scores() and rec["winners"] == state.winners()


def test_end_action_is_taken_first_without_consuming_randomness() -> None:
    class Stub:
        def legal_actions(self) -> list[str]:
            return ["pick(1)", "declare_end()", "declare_end_now()", "declare_end(2)"]

        def num_choices(self) -> int:
            return 4

    # No draws scripted: any rng use would fail.
    assert sim.pick_random_action(ScriptedRng(), Stub(), {"declare_end"}) == 1
    assert sim.pick_random_action(ScriptedRng((4, 3)), Stub(), set()) == 3


def test_end_declaration_ends_random_games(fake_file: Path) -> None:
    game = fake_load(fake_file, params={"rounds": 10, "allow_end": True})
    res = sim.play_random_game(game, 2, seed=3, record=True)
    # Round 1: two picks and a roll; round 2: player 0 declares the end at once.
    assert res.record["actions"][-1] == "declare_end()"
    assert res.decisions == 3 and res.chance_events == 1


def test_weighted_chance_uses_weights(fake_file: Path) -> None:
    game = fake_load(fake_file, variant="rigged", params={"rounds": 5})
    res = sim.play_random_game(game, 2, seed=11, record=True)
    rolls = [a for a in res.record["actions"] if a.startswith("roll")]
    assert rolls == ["roll(6)"] * 5


def test_simulate_summary_shape(fake_file: Path) -> None:
    calls: list[tuple[int, int]] = []
    summary = sim.simulate(
        fake_file, 2, 50, seed=1, loader=fake_load, progress=lambda d, t: calls.append((d, t))
    )
    assert summary["games"] == 50 and summary["players"] == 2
    assert calls[0] == (0, 50) and calls[-1] == (50, 50)
    assert sum(seat["wins"] for seat in summary["seats"]) == pytest.approx(50)
    assert summary["length"] == {"mean": 4.0, "stdev": 0.0, "min": 4, "max": 4}
    for seat in summary["seats"]:
        low, high = seat["win_ci95"]
        assert low <= seat["win_rate"] <= high
        assert 0 <= seat["score"]["min"] <= seat["score"]["mean"] <= seat["score"]["max"]
    assert summary["timing"]["games_per_sec"] > 0
    json.dumps(summary)


def test_simulate_same_results_for_any_jobs(fake_file: Path, tmp_path: Path) -> None:
    kwargs = dict(variant="loaded", params={"rounds": 3}, loader=fake_load)
    one = sim.simulate(fake_file, 3, 40, seed=9, jobs=1, records_dir=tmp_path / "r1", **kwargs)
    two = sim.simulate(fake_file, 3, 40, seed=9, jobs=2, records_dir=tmp_path / "r2", **kwargs)
    assert deterministic(one) == deterministic(two)
    assert two["timing"]["jobs"] == 2
    files1 = sorted(p.name for p in (tmp_path / "r1").iterdir())
    assert len(files1) == 40
    for name in files1:
        assert (tmp_path / "r1" / name).read_text() == (tmp_path / "r2" / name).read_text()
    other = sim.simulate(fake_file, 3, 40, seed=10, **kwargs)
    assert deterministic(other) != deterministic(one)


_FIRST_LOADER: list[int] = []


def first_process_load(path: Any, variant: str | None = None,
                       params: dict[str, Any] | None = None,
                       backend: str = "interpreter") -> FakeGame:
    """fake_load, refusing to load in any process but the first that called it."""
    if not _FIRST_LOADER:
        _FIRST_LOADER.append(os.getpid())
    if os.getpid() != _FIRST_LOADER[0]:
        raise RuntimeError("the game was loaded again in a worker")
    return fake_load(path, variant, params, backend)


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork",
                    reason="workers inherit the loaded game only when forked")
def test_forked_workers_play_the_game_loaded_here(fake_file: Path) -> None:
    kwargs = dict(variant="loaded", params={"rounds": 3})
    two = sim.simulate(fake_file, 3, 40, seed=9, jobs=2, loader=first_process_load, **kwargs)
    one = sim.simulate(fake_file, 3, 40, seed=9, jobs=1, loader=fake_load, **kwargs)
    assert deterministic(two) == deterministic(one)
    assert not sim._INHERITED  # let go of once the pool is done


def test_simulate_rejects_bad_requests(fake_file: Path) -> None:
    with pytest.raises(ValueError, match="2 to 3 players"):
        sim.simulate(fake_file, 5, 3, seed=0, loader=fake_load)
    with pytest.raises(ValueError, match="jobs"):
        sim.simulate(fake_file, 2, 3, seed=0, jobs=0, loader=fake_load)


def test_worker_errors_cross_the_process_boundary(fake_file: Path) -> None:
    with pytest.raises(ValueError, match="unknown parameter"):
        sim.simulate(fake_file, 2, 4, seed=0, jobs=2, params={"nope": 1}, loader=fake_load)


def test_unpicklable_worker_error_becomes_simulation_error(fake_file: Path) -> None:
    with pytest.raises(TwoArgError) as local:
        sim.simulate(fake_file, 2, 4, seed=0, params={"fault": True}, loader=fake_load)
    assert "in simulated game 0 (seed" in local.value.__notes__[0]
    with pytest.raises(sim.SimulationError, match="TwoArgError: fake.rules:3:1") as remote:
        sim.simulate(fake_file, 2, 4, seed=0, jobs=2, params={"fault": True}, loader=fake_load)
    assert "in simulated game" in remote.value.__notes__[0]


def test_jobs_name_the_first_failing_game_as_one_job_does(fake_file: Path) -> None:
    # Every game faults at its first roll; game 0's roll faults a second late. One job meets
    # game 0's fault first; two jobs used to report game 1's, which their second worker met
    # first, and now wait for the games before it, as the results wait to be put in order.
    def first_roll(root: int, index: int) -> int:
        game = fake_load(fake_file)
        record = sim.play_random_game(game, 2, sim.game_seed(root, index), True).record
        return int(next(a for a in record["actions"] if a.startswith("roll"))[5:-1])

    root = next(r for r in range(100) if first_roll(r, 0) != first_roll(r, 1))
    params = {"fault": True, "slow_roll": first_roll(root, 0)}
    with pytest.raises(TwoArgError) as one:
        sim.simulate(fake_file, 2, 4, seed=root, params=params, loader=fake_load)
    assert one.value.__notes__ == [f"in simulated game 0 (seed {sim.game_seed(root, 0)})"]
    with pytest.raises(sim.SimulationError) as two:
        sim.simulate(fake_file, 2, 4, seed=root, jobs=2, params=params, loader=fake_load)
    assert two.value.__notes__ == one.value.__notes__


FOREVER = """\
game Forever
players 2..2
state { c: int[player] = 0 }
flow {
  while true {
    for p in players {
      choose p {
        wait() { c[p] += 0 }
        nudge() { c[p] += 1 }
      }
    }
  }
}
score p => c[p]
heuristic p => c[p]
"""


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize("seats", [None, ("greedy", "random")])
def test_a_game_that_never_ends_stops_the_run_at_the_step_limit(tmp_path, backend, seats):
    # Every step is a decision, so no rules limit stops it: simulate (and compare, sweep,
    # tournament) used to run for ever without a word.
    path = tmp_path / "forever.rules"
    path.write_text(FOREVER)
    with pytest.raises(sim.GameTooLong) as err:
        sim.simulate(path, 2, 3, seed=0, backend=backend, seats=seats, max_steps=500)
    assert str(err.value) == (
        "the game had not ended after 500 steps (decisions and chance events): the rules, or "
        "the seats' policies, may loop for ever; --max-steps sets the limit")
    assert err.value.__notes__ == [f"in simulated game 0 (seed {sim.game_seed(0, 0)})"]
    assert sim.RunSpec(None, "", None, {}, backend, 2, 0).max_steps == sim.MAX_GAME_STEPS


def test_the_step_limit_is_checked_before_the_games(tmp_path):
    path = tmp_path / "forever.rules"
    path.write_text(FOREVER)
    with pytest.raises(ValueError, match="max_steps must be >= 1, or -1 for no limit, got 0"):
        sim.simulate(path, 2, 3, seed=0, max_steps=0)
    res = CliRunner().invoke(cli, ["simulate", str(path), "-p", "2", "-n", "2",
                                   "--max-steps", "300"])
    assert res.exit_code == 1
    assert "error: the game had not ended after 300 steps" in res.stderr


ROUNDS_AFTER = """\
game Counted
players 2..2
param rounds: int in 1..9 = 3
state { round: int = 1  c: int[player] = 0 }
flow {
  while round <= rounds {
    for p in players {
      choose p {
        go() { c[p] += 1 }
      }
    }
    round += 1
  }
}
score p => c[p]
"""


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_rounds_played_counts_a_loop_that_counts_at_its_end(tmp_path, backend):
    # `while round <= rounds { ...; round += 1 }` ends with round = 4 after 3 rounds; the
    # workbench's "rounds played" said 4 (3 with a loop counting at the start, as Poder's).
    path = tmp_path / "counted.rules"
    path.write_text(ROUNDS_AFTER)
    game = rulelang.load(str(path), backend=backend)
    result = sim.play_game(game, 2, 1)
    assert result.progress == 3 and result.decisions == 6
    assert sim.play_game(game, 2, 1, seats=["random", "random"], track=True).progress == 3


DIVIDES = """\
game Div
players 2..2
state { x: int[player] = 0 }
flow {
  for p in players {
    choose p {
      go(k: int in 1..3) {
        x[p] += k // (k - k)
      }
    }
  }
}
score p => x[p]
"""


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_a_rules_fault_in_a_worker_says_which_game(tmp_path: Path, backend: str) -> None:
    # The fault's position and the game's index and seed, from a worker process as from this
    # one (the note used to be lost on the way back: RulesRuntimeError pickled without it).
    from rulelang.errors import RulesRuntimeError

    path = tmp_path / "div.rules"
    path.write_text(DIVIDES)
    for jobs in (1, 2):
        with pytest.raises(RulesRuntimeError) as err:
            sim.simulate(path, 2, 2, seed=0, jobs=jobs, backend=backend)
        assert str(err.value) == f"{path}:8:17: division by zero"
        (note,) = err.value.__notes__
        index = int(note.split()[3])
        assert note == f"in simulated game {index} (seed {sim.game_seed(0, index)})"


# ---------------------------------------------------------------------------- CLI


def test_parse_value() -> None:
    assert parse_value("42") == 42 and parse_value("-3") == -3
    assert parse_value("true") is True and parse_value("False") is False
    assert parse_value("benelux") == "benelux"


def test_cli_check_counts_variants_in_english() -> None:
    rules = Path(__file__).resolve().parent.parent / "rules"
    for name, text in (("poder", "Poder, 1 variant)"), ("acquire", "Acquire, 0 variants)"),
                       ("powergrid", "PowerGrid, 2 variants)")):
        res = CliRunner().invoke(cli, ["check", str(rules / f"{name}.rules")])
        assert res.exit_code == 0 and res.stdout.strip().endswith(f"(game {text}"), res.output


def test_cli_check_ok_and_failure(fake_file: Path, tmp_path: Path) -> None:
    ok = run_cli(["check", fake_file])
    assert ok.exit_code == 0
    assert ok.stdout.strip() == f"ok: {fake_file} (game Fake, 2 variants)"
    bad = tmp_path / "bad.rules"
    bad.write_text("syntax error here\n", encoding="utf-8")
    res = run_cli(["check", fake_file, bad, tmp_path / "missing.rules"])
    assert res.exit_code == 3  # exitcodes.RULES
    assert "syntax error" in res.stderr
    assert "missing.rules" in res.stderr
    assert "Traceback" not in res.output + res.stderr


def test_cli_simulate_table_and_json(fake_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "summary.json"
    res = run_cli(
        [
            "simulate",
            fake_file,
            "--players",
            "2",
            "--games",
            "30",
            "--seed",
            "4",
            "-D",
            "rounds=3",
            "-D",
            "allow_end=false",
            "--json",
            out,
        ]
    )
    assert res.exit_code == 0, res.output + res.stderr
    assert "games/s" in res.stdout and "95% interval" in res.stdout
    summary = json.loads(out.read_text())
    assert summary["params"] == {"rounds": 3, "allow_end": False}
    expected = sim.simulate(
        fake_file, 2, 30, seed=4, params={"rounds": 3, "allow_end": False}, loader=fake_load,
        backend=DEFAULT_BACKEND,
    )
    assert deterministic(summary) == json.loads(json.dumps(deterministic(expected)))


def test_simulate_tables_separate_thousands() -> None:
    # Acquire-sized scores and long games read with thousands separators.
    from rulelang.cli import render_summary

    seat = {"seat": 0, "wins": 12.5, "win_rate": 0.25, "win_ci95": [0.15, 0.385],
            "score": {"mean": 39160.04, "stdev": 11163.25, "min": 7900, "max": 69800}}
    summary = {"game": "G", "players": 4, "games": 50, "seed": 0, "backend": "compiled",
               "variant": None, "params": {},
               "timing": {"games_per_sec": 1234.5, "decisions_per_sec": 271590.4,
                          "elapsed_seconds": 0.04, "jobs": 1},
               "length": {"mean": 1212.34, "stdev": 29.9, "min": 1139, "max": 1289},
               "chance_events": {"mean": 90.4, "stdev": 10.7}, "seats": [seat]}
    _head, overview, seats = render_summary(summary)
    assert [list(c.cells) for c in overview.columns][1] == [
        "1,234.50", "271,590", "0.04 s (1 job)", "1,212.3 ± 29.9  [1,139, 1,289]", "90.4 ± 10.7"]
    assert [list(c.cells)[0] for c in seats.columns] == [
        "0", "12.5", "25.0%", "15.0–38.5%", "39,160.0", "11,163.2", "7,900", "69,800"]
    # the HTML report (--report) writes the same cells, with the seat's kind after its number
    pytest.importorskip("matplotlib")
    from rulelang.workbench.report import simulate_report

    page = simulate_report(summary)
    assert ("<tr><td>0</td><td>random</td><td>12.5</td><td>25.0%</td><td>15.0–38.5%</td>"
            "<td>39,160.0</td><td>11,163.2</td><td>7,900</td><td>69,800</td></tr>") in page
    assert "mean 1,212.3, standard deviation 29.9, from 1,139 to 1,289." in page


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--players", "7"], "2 to 3 players"),
        (["--players", "2", "-D", "nonsense"], "name=value"),
        (["--players", "2", "-D", "unknown=1"], "unknown parameter"),
        (["--players", "2", "--variant", "nope"], "unknown variant"),
    ],
)
def test_cli_simulate_errors_are_clean(fake_file: Path, args: list[str], message: str) -> None:
    res = run_cli(["simulate", fake_file, "--games", "2", *args])
    assert res.exit_code == 2
    assert message in res.stderr
    assert isinstance(res.exception, SystemExit)
    assert "Traceback" not in res.stderr


@pytest.mark.skipif(RulesError is None, reason="rulelang.errors not available")
def test_cli_simulate_rules_error_is_clean(tmp_path: Path) -> None:
    bad = tmp_path / "bad.rules"
    bad.write_text("syntax error\n", encoding="utf-8")
    res = run_cli(["simulate", bad, "--players", "2"])
    assert res.exit_code == 3  # exitcodes.RULES
    assert "error[E001]: syntax error" in res.stderr
    assert "^" in res.stderr


def test_cli_replay_checks_digests(fake_file: Path, tmp_path: Path) -> None:
    records = tmp_path / "records"
    res = run_cli(
        [
            "simulate",
            fake_file,
            "-p",
            "3",
            "-n",
            "3",
            "--records",
            records,
            "--variant",
            "loaded",
            "-D",
            "rounds=3",
            "--digest-every",
            "1",
        ]
    )
    assert res.exit_code == 0, res.stderr
    record = records / "game-000001.json"
    good = run_cli(["replay", fake_file, record])
    assert good.exit_code == 0, good.stderr
    assert "replayed 12 actions; 12 digests match" in good.stdout
    assert good.stderr == ""

    rec = json.loads(record.read_text())
    rec["digests"][5] = "0" * 64
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(rec))
    res = run_cli(["replay", fake_file, tampered])
    assert res.exit_code == 4  # exitcodes.RECORD
    assert "step 5" in res.stderr

    rec = json.loads(record.read_text())
    rec["rules_digest"] = "f" * 64
    tampered.write_text(json.dumps(rec))
    res = run_cli(["replay", fake_file, tampered])
    assert res.exit_code == 0
    assert "warning" in res.stderr

    tampered.write_text("{not json")
    res = run_cli(["replay", fake_file, tampered])
    assert res.exit_code == 4 and "not valid JSON" in res.stderr


def test_cli_play_human_against_random(fake_file: Path, tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    # Round 1 by number, round 2 by canonical string, with one bad answer in between.
    res = run_cli(
        ["play", fake_file, "--players", "human,random", "--seed", "3", "--record", record],
        input="2\nbogus\n9\npick(3)\n",
    )
    assert res.exit_code == 0, res.output + res.stderr
    assert "not legal now" in res.stderr and "no action numbered 9" in res.stderr
    assert "game over" in res.stdout and "winners:" in res.stdout
    rec = json.loads(record.read_text())
    assert rec["actions"][0] == "pick(2)" and rec["actions"][3] == "pick(3)"
    assert run_cli(["replay", fake_file, record]).exit_code == 0


def test_cli_play_handles_eof(fake_file: Path) -> None:
    res = run_cli(["play", fake_file, "--players", "random,human", "--seed", "1"], input="")
    assert res.exit_code == 1
    assert "abandoned" in res.stderr
    assert isinstance(res.exception, SystemExit)


def test_cli_play_rejects_bad_seat_list(fake_file: Path) -> None:
    res = run_cli(["play", fake_file, "--players", "human,robot"])
    assert res.exit_code == 2
    assert "human/random" in res.stderr


# ---------------------------------------------------------------------------- real rules


@pytest.mark.skipif(not ACQUIRE.exists(), reason="rules/acquire.rules not written yet")
def test_real_acquire_check_and_simulate(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["check", str(ACQUIRE)])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith(f"ok: {ACQUIRE}")
    records = tmp_path / "records"
    res = runner.invoke(
        cli,
        [
            "simulate",
            str(ACQUIRE),
            "--players",
            "4",
            "--games",
            "2",
            "--seed",
            "1",
            "--records",
            str(records),
        ],
    )
    assert res.exit_code == 0, res.output + res.stderr
    res = runner.invoke(cli, ["replay", str(ACQUIRE), str(records / "game-000000.json")])
    assert res.exit_code == 0, res.output + res.stderr


class _NoFastPaths:
    """A real engine seen through the plain protocol only (no end_action_index)."""

    def __init__(self, game):
        self._game = game
        self.end_actions = game.end_actions
        self.source_digest = game.source_digest

    def new_game(self, num_players):
        return _PlainState(self._game.new_game(num_players))


class _PlainState:
    def __init__(self, state):
        self._s = state

    def __getattr__(self, name):
        if name == "end_action_index":
            raise AttributeError(name)
        return getattr(self._s, name)


@pytest.mark.skipif(not ACQUIRE.exists(), reason="rules/acquire.rules not written yet")
@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_fast_driver_loop_plays_the_same_games_as_the_plain_one(backend):
    import rulelang

    game = rulelang.load(str(ACQUIRE), backend=backend)
    for seed in (3, 11):
        fast = sim.play_random_game(game, 3, seed)
        plain = sim.play_random_game(_NoFastPaths(game), 3, seed)
        assert (fast.scores, fast.decisions, fast.chance_events) == (
            plain.scores, plain.decisions, plain.chance_events)
