"""What the command line says when a game goes wrong: the record of the game that faulted
(`simulate --records`), the arm or sweep point a fault is in, a user policy that raises or
answers wrongly, and the smaller points of the command-line audits (a tournament's default
player count, the -L error, bools in the run header, what simulate's ± is)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import rulelang
from rulelang import exitcodes as X
from rulelang import sim
from rulelang.cli import cli

ACQUIRE = Path(__file__).resolve().parent.parent / "rules" / "acquire.rules"

# Every take of 20 divides by zero at line 10 (column 21): game 40 of seed 0 is the first to
# take it. `cheap=false` makes a take cost `price` out of 3, so at price 4 and up no take is
# legal and the first decision faults.
TRAP = """\
game Trap
players 2..2
param cheap: bool = true
param price: int = 1
state { total: int[player] = 0 }
flow {
  for p in players {
    choose p {
      take(n: int in 1..20) when n * (if cheap then 1 else price) <= (if cheap then 20 else 3) {
        total[p] += 12 // (20 - n)
      }
    }
  }
}
score p => total[p]
"""
DIVISION = ("fault: division by zero\n"
            "   10 |         total[p] += 12 // (20 - n)\n"
            "                            ^\n")
NO_TAKE = ("fault: no legal action at this decision\n"
           "    8 |     choose p {\n"
           "            ^\n")
# The score faults once the game is over: every game plays to its end first.
SCORE_FAULT = TRAP.replace("12 // (20 - n)", "n").replace(
    "score p => total[p]", "score p => 100 // (total[p] - total[p])")
START_FAULT = TRAP.replace("flow {\n", 'flow {\n  fail "broken from the start"\n')

THREE = """\
game Three
players 3..4
state { x: int[player] = 0 }
flow {
  for p in players {
    choose p { a(n: int in 1..3) { x[p] += n } }
  }
}
score p => x[p]
"""

POLICIES = '''\
def boom(state, seat, rng):
    raise RuntimeError("my bug")


def deep(state, seat, rng):
    _pick(state)
    return 0


def _pick(state):
    raise ValueError(f"{len(state.legal_actions())} actions")


def twoargs(state, seat):
    return 0


def anything(state, seat, rng):
    return rng.randrange(state.num_choices())


def bad_index(state, seat, rng):
    return 10**6


def illegal(state, seat, rng):
    state.clone().apply("bogus")
    return 0
'''


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RULELANG_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def trap(tmp_path) -> Path:
    path = tmp_path / "trap.rules"
    path.write_text(TRAP, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def policies(tmp_path_factory) -> Path:
    """The policy module `faultpol` (on sys.path for this module's tests) and its file."""
    folder = tmp_path_factory.mktemp("pol")
    path = folder / "faultpol.py"
    path.write_text(POLICIES, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(folder))
        mp.delitem(sys.modules, "faultpol", raising=False)
        yield path
        sys.modules.pop("faultpol", None)


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def note(index: int) -> str:
    return f"  note: in simulated game {index} (seed {sim.game_seed(0, index)})\n"


# ---------------------------------------------------------------------------- simulate --records


@pytest.mark.parametrize("options", [["--backend", "interpreter"], ["--backend", "compiled"],
                                     ["--jobs", "2"], ["--digest-every", "1"],
                                     ["--bots", "random", "-p", "2"],
                                     ["-p", "faultpol:anything,random"]])
def test_records_keep_the_game_that_faulted(trap, tmp_path, policies, options):
    """The records of games 0..39 were written, not game 40's: the one the note names."""
    folder = tmp_path / "recs"
    seats = [] if "-p" in options else ["-p", "2"]
    res = run("simulate", trap, *seats, "-n", "60", "--records", folder, *options)
    assert res.exit_code == X.FAULT
    index = int(res.stderr.split("in simulated game ")[1].split(" ")[0])
    record = folder / f"game-{index:06d}.json"
    assert res.stderr == (f"{trap}:10:21: {DIVISION}" + note(index)
                          + f"  note: record: {record} (the game up to the fault)\n")
    written = {p.name for p in folder.iterdir()}
    # (with --jobs 2 a worker may have finished later games before the run stopped)
    assert written >= {f"game-{i:06d}.json" for i in range(index + 1)}
    assert written == {f"game-{i:06d}.json" for i in range(index + 1)} or "--jobs" in options
    rec = json.loads(record.read_text())
    # the actions before the faulty one: take(20) is not among them
    assert rec["seed"] == sim.game_seed(0, index) and rec["scores"] is rec["winners"] is None
    assert "take(20)" not in rec["actions"]
    assert rec["actions"] or "faultpol:anything,random" in options  # (it took 20 at once)
    game = rulelang.load(trap, backend="interpreter")
    state = game.new_game(2)
    for action in rec["actions"]:
        state.apply(action)
    assert "take(20)" in state.legal_actions()
    if "seats" in rec:
        assert rec["seats"] == ["faultpol:anything", "random"]
    res = run("replay", trap, record)
    assert res.exit_code == X.OK, res.output
    assert res.stdout.endswith("the record ends before the game is over\n")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_record_of_a_game_whose_score_faults_replays_to_the_fault(tmp_path, jobs):
    """All its actions, scores null; `replay` of it ended in a Python traceback."""
    path = tmp_path / "score.rules"
    path.write_text(SCORE_FAULT, encoding="utf-8")
    folder = tmp_path / "recs"
    res = run("simulate", path, "-p", "2", "-n", "3", "--records", folder, "--jobs", jobs)
    fault = (f"{path}:15:12: fault: division by zero\n"
             "   15 | score p => 100 // (total[p] - total[p])\n"
             "                   ^\n")
    record = folder / "game-000000.json"
    assert res.exit_code == X.FAULT
    assert res.stderr == (fault + note(0)
                          + f"  note: record: {record} (the game up to the fault)\n")
    rec = json.loads(record.read_text())
    assert len(rec["actions"]) == 2 and rec["scores"] is None
    assert rec["digest_steps"] == [1] and len(rec["digests"]) == 1
    res = run("replay", path, record)
    assert res.exit_code == X.FAULT
    assert res.stdout == "replayed 2 actions; 1 digests match\n"
    assert res.stderr == fault.rstrip("\n") + "\n"


def test_a_record_of_a_game_that_faults_at_its_start_has_no_actions(tmp_path):
    path = tmp_path / "start.rules"
    path.write_text(START_FAULT, encoding="utf-8")
    folder = tmp_path / "recs"
    res = run("simulate", path, "-p", "2", "-n", "3", "--records", folder)
    record = folder / "game-000000.json"
    assert res.exit_code == X.FAULT
    assert res.stderr.endswith(note(0) + f"  note: record: {record} (the game up to the "
                                         "fault)\n")
    rec = json.loads(record.read_text())
    assert rec["actions"] == [] and rec["digests"] == [] and rec["players"] == 2
    res = run("replay", path, record)
    assert res.exit_code == X.FAULT and "broken from the start" in res.stderr


def test_without_records_the_message_names_no_record(trap):
    res = run("simulate", trap, "-p", "2", "-n", "60")
    assert res.exit_code == X.FAULT
    assert res.stderr == f"{trap}:10:21: {DIVISION}" + note(40)


# ---------------------------------------------------------------------------- compare, sweep


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_fault_in_compare_names_its_arm(trap, jobs):
    res = run("compare", trap, "-p", "2", "-n", "3", "-D", "cheap=false", "-A", "price=1",
              "-B", "price=5", "--jobs", jobs)
    assert res.exit_code == X.FAULT
    assert res.stderr == (f"{trap}:8:5: {NO_TAKE}" + note(0)
                          + "  note: in arm B (cheap=false, price=5)\n")
    res = run("compare", trap, "-p", "2", "-n", "3", "--a-variant", "nope", "-B", "price=5")
    assert res.exit_code == X.USAGE and "in arm" not in res.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_fault_in_a_sweep_names_its_point(trap, jobs):
    res = run("sweep", trap, "-p", "2", "-n", "3", "-D", "cheap=false", "--param", "price=2..5",
              "--jobs", jobs)
    assert res.exit_code == X.FAULT
    assert res.stderr == f"{trap}:8:5: {NO_TAKE}" + note(0) + "  note: at sweep point price=4\n"
    res = run("sweep", trap, "-p", "2", "-n", "3", "--param", "price=3..4", "--param",
              "cheap=true,false")
    assert res.exit_code == X.FAULT
    assert res.stderr.endswith(note(0) + "  note: at sweep point price=4, cheap=false\n")


# ---------------------------------------------------------------------------- user policies


@pytest.mark.parametrize("command", [
    ["simulate", "-p", "faultpol:{f},random", "-n", "3"],
    ["simulate", "-p", "faultpol:{f},random", "-n", "3", "--jobs", "2"],
    ["simulate", "--bot", "mine=faultpol:{f}", "-p", "mine,random", "-n", "3"],
    ["compare", "-p", "faultpol:{f},random", "-n", "3", "-B", "price=2"],
    ["compare", "-p", "faultpol:{f},random", "-n", "3", "-B", "price=2", "--jobs", "2"],
    ["sweep", "--bots", "faultpol:{f},random", "-n", "3", "--param", "price=1..2"],
    ["tournament", "--bots", "faultpol:{f},random", "-n", "3"],
    ["tournament", "--bots", "faultpol:{f},random", "-n", "3", "--jobs", "2"],
])
def test_a_policy_that_raises_is_a_message_with_its_own_frames(trap, policies, command):
    """It was a Python traceback through rulelang and click, 30 lines."""
    where = {"compare": "  note: in arm A (base rules)\n",
             "sweep": "  note: at sweep point price=1\n"}.get(command[0], "")

    def cli_args(f: str) -> list[str]:
        return [command[0], trap, *(a.replace("{f}", f) for a in command[1:])]

    res = run(*cli_args("boom"))
    assert res.exit_code == X.FAILURE and isinstance(res.exception, SystemExit)
    assert res.stderr == ("error: policy faultpol:boom raised RuntimeError: my bug\n"
                          f'  File "{policies}", line 2, in boom\n'
                          '    raise RuntimeError("my bug")\n' + note(0) + where)
    res = run(*cli_args("deep"))
    assert res.exit_code == X.FAILURE
    assert res.stderr == ("error: policy faultpol:deep raised ValueError: 20 actions\n"
                          f'  File "{policies}", line 6, in deep\n'
                          "    _pick(state)\n"
                          f'  File "{policies}", line 11, in _pick\n'
                          '    raise ValueError(f"{len(state.legal_actions())} actions")\n'
                          + note(0) + where)
    res = run(*cli_args("twoargs"))
    assert res.exit_code == X.FAILURE
    assert res.stderr == ("error: policy faultpol:twoargs raised TypeError: twoargs() takes 2 "
                          "positional arguments but 3 were given\n"
                          "  note: a policy is called as function(state, seat, rng) and "
                          "returns an index into state.legal_actions() or an action string\n"
                          + note(0) + where)
    # an answer that is not a legal action: a failed bot as well (it was a usage error, 2)
    res = run(*cli_args("bad_index"))
    assert res.exit_code == X.FAILURE
    assert res.stderr == ("error: policy faultpol:bad_index returned index 1000000 out of "
                          "range\n" + note(0) + where)


def test_a_policy_frames_leave_out_rulelang(trap, policies):
    res = run("simulate", trap, "-p", "faultpol:illegal,random", "-n", "2")
    assert res.exit_code == X.FAILURE
    first, *rest = res.stderr.splitlines()
    assert first.startswith("error: policy faultpol:illegal raised IllegalAction: ")
    assert rest == [f'  File "{policies}", line 27, in illegal',
                    '    state.clone().apply("bogus")', note(0).rstrip("\n")]


def test_a_policy_that_cannot_be_imported_is_still_a_usage_error(trap, policies):
    res = run("simulate", trap, "-p", "faultpol:nothing,random", "-n", "2")
    assert res.exit_code == X.USAGE
    assert res.stderr == "error: 'faultpol' has no function 'nothing'\n"


def test_a_policy_that_raises_from_python(trap, policies):
    game = rulelang.load(trap, backend="interpreter")
    with pytest.raises(sim.PolicyError) as err:
        sim.play_game(game, 2, 0, seats=["faultpol:boom", "random"])
    assert isinstance(err.value.__cause__, RuntimeError)
    assert str(err.value).splitlines()[0] == "policy faultpol:boom raised RuntimeError: my bug"
    with pytest.raises(sim.PolicyError) as err:
        sim.simulate(trap, 2, 2, 0, seats=["faultpol:boom", "random"])
    assert err.value.__notes__ == [f"in simulated game 0 (seed {sim.game_seed(0, 0)})"]


# ---------------------------------------------------------------------------- smaller points


def test_a_tournament_says_where_its_player_count_came_from(tmp_path):
    path = tmp_path / "three.rules"
    path.write_text(THREE, encoding="utf-8")
    res = run("tournament", path, "--bots", "greedy,random", "-n", "4")
    assert res.exit_code == X.USAGE
    assert res.stderr == ("error: Three takes 3 to 4 players, not 2 (the number of --bots "
                          "kinds; give -p 3)\n")
    res = run("tournament", path, "--bots", "greedy,random,mcts@5,mcts@6,mcts@7", "-n", "4")
    assert res.exit_code == X.USAGE
    assert res.stderr == ("error: Three takes 3 to 4 players, not 5 (the number of --bots "
                          "kinds; give -p 4)\n")
    res = run("tournament", path, "--bots", "greedy,random", "-p", "2", "-n", "4")
    assert res.exit_code == X.USAGE
    assert res.stderr == "error: Three takes 3 to 4 players, not 2\n"
    res = run("tournament", path, "--bots", "greedy,random", "-p", "3", "-n", "2", "--json", "-")
    assert res.exit_code == X.OK and json.loads(res.stdout)["players"] == 3


@pytest.mark.parametrize("command", ["simulate", "compare", "replay"])
def test_the_limit_error_names_the_form(trap, command):
    res = run(command, trap, *(["x.json"] if command == "replay" else ["-p", "2"]),
              "-L", "max_loops=5")
    assert res.exit_code == X.USAGE
    assert ("Invalid value for '-L' / '--limit': expected NAME=N with NAME one of "
            "max_collection, max_int_digits, max_loop_steps, got 'max_loops=5'\n") in res.stderr


def test_the_run_header_writes_bools_as_the_rules_do(trap, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # (a set COLUMNS folds the line at its width)
    res = run("simulate", trap, "-p", "2", "-n", "2", "-D", "cheap=false", "-D", "price=3")
    assert res.exit_code == X.OK, res.output
    first = res.stdout.splitlines()[0]
    assert first.endswith(", variant -, params cheap=false, price=3")
    pytest.importorskip("matplotlib")
    from rulelang.workbench.report import simulate_report

    out = run("simulate", trap, "-p", "2", "-n", "2", "-D", "cheap=TRUE", "--json", "-")
    page = simulate_report(json.loads(out.stdout))
    assert "parameters cheap=true." in page


def test_simulate_labels_its_plus_minus_as_a_standard_deviation():
    """simulate's ± is a standard deviation, sweep's a 95% interval: the table says which."""
    from rulelang.cli import render_summary

    summary = {"game": "G", "players": 2, "games": 5, "seed": 0, "backend": "compiled",
               "variant": None, "params": {"crashes": True},
               "timing": {"games_per_sec": 10.0, "decisions_per_sec": 100.0,
                          "elapsed_seconds": 0.5, "jobs": 1},
               "length": {"mean": 205.0, "stdev": 26.7, "min": 44, "max": 259},
               "chance_events": {"mean": 9.0, "stdev": 1.5}, "seats": []}
    head, overview, _seats = render_summary(summary)
    assert head.plain == ("G  2 players, 5 games, seed 0, backend compiled, variant -, "
                          "params crashes=true")
    assert [list(c.cells) for c in overview.columns] == [
        ["games/s", "decisions/s", "elapsed", "game length (decisions): mean ± sd [min, max]",
         "chance events per game: mean ± sd"],
        ["10.00", "100", "0.50 s (1 job)", "205.0 ± 26.7  [44, 259]", "9.0 ± 1.5"]]


def test_play_reports_a_raising_policy_without_a_traceback(tmp_path, monkeypatch):
    # `rulelang play` printed the whole traceback through rulelang and click, and exited 0
    (tmp_path / "s19pol.py").write_text(
        "def boom(state, seat, rng):\n    raise RuntimeError('my bug')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    record = tmp_path / "game.json"
    for seats in ("human,s19pol:boom,random", "s19pol:boom,human,random"):
        res = CliRunner().invoke(cli, ["play", str(ACQUIRE), "-p", seats, "--seed", "1",
                                       "--record", str(record)], input="1\n" * 3)
        err = res.stderr
        assert res.exit_code == X.FAILURE, (seats, res.output)
        assert "error: policy s19pol:boom raised RuntimeError: my bug\n" in err, err
        assert 'in boom\n    raise RuntimeError(\'my bug\')' in err and "click" not in err
        assert "Traceback" not in err
