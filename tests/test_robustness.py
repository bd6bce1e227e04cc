"""Issue 7 items 10, 11, 13 and 17, and the exit-code scheme of every command.

Replay refuses truncated and mistyped records, `play` survives any answer, the command line
gives messages (never tracebacks) for hostile values, bool table keys work on both back ends,
and every command exits with the documented code for each kind of failure.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import rulelang
from rulelang import exitcodes as X
from rulelang.cli import cli
from tests.conftest import sigint_as_in_a_terminal

GAME = """\
game Steps
players 2..3
param rounds: int = 3
state {
  total: int[player] = 0
}
flow {
  for r in 1..rounds {
    for p in players {
      chance die(d: int in 1..3)
      choose p {
        take(k: int in 1..2) {
          total[p] += k * d
        }
      }
    }
  }
}
score p => total[p]
"""

FAULTY = GAME.replace("total[p] += k * d", "total[p] += k * d // (2 - k)")
FAULT_AT_START = GAME.replace("flow {\n", 'flow {\n  fail "broken from the start"\n')


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RULELANG_CACHE", str(tmp_path / "cache"))


def run(*args, input: str | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


@pytest.fixture
def rules(tmp_path) -> Path:
    path = tmp_path / "steps.rules"
    path.write_text(GAME, encoding="utf-8")
    return path


@pytest.fixture
def record(rules, tmp_path) -> Path:
    out = tmp_path / "records"
    res = run("simulate", rules, "-p", "2", "-n", "1", "--seed", "5", "--records", out,
              "--digest-every", "1")
    assert res.exit_code == 0, res.output
    return out / "game-000000.json"


def replay_with(rules: Path, tmp_path: Path, rec) -> tuple[int, str]:
    path = tmp_path / "edited.json"
    path.write_text(rec if isinstance(rec, str) else json.dumps(rec), encoding="utf-8")
    res = run("replay", rules, path)
    assert "Traceback" not in res.output
    return res.exit_code, res.output


# ---------------------------------------------------------------------------- item 10


def test_replay_of_the_whole_record_passes(rules, record):
    res = run("replay", rules, record)
    assert res.exit_code == 0
    assert "replayed 12 actions; 12 digests match" in res.output


def test_replay_refuses_a_truncated_record_that_keeps_its_result(rules, record, tmp_path):
    rec = json.loads(record.read_text())
    assert rec["scores"] is not None
    for keep in (0, 5, 11):
        cut = dict(rec, actions=rec["actions"][:keep], digests=rec["digests"][:keep])
        code, out = replay_with(rules, tmp_path, cut)
        assert code == X.RECORD
        assert "ends before the game is over, yet gives final scores" in out
    only_winners = dict(rec, actions=rec["actions"][:5], digests=rec["digests"][:5], scores=None)
    assert replay_with(rules, tmp_path, only_winners)[0] == X.RECORD


def test_replay_of_an_unfinished_game_without_a_result_passes(rules, record, tmp_path):
    rec = json.loads(record.read_text())
    cut = dict(rec, actions=rec["actions"][:5], digests=rec["digests"][:5], scores=None,
               winners=None)
    code, out = replay_with(rules, tmp_path, cut)
    assert code == 0
    assert "replayed 5 actions; 5 digests match" in out
    assert "the record ends before the game is over" in out


@pytest.mark.parametrize("digests", [[], "short", "long"])
def test_replay_refuses_digests_that_do_not_cover_every_action(rules, record, tmp_path,
                                                               digests):
    rec = json.loads(record.read_text())
    if digests == "short":
        rec["digests"] = rec["digests"][:-1]
    elif digests == "long":
        rec["digests"] = rec["digests"] + ["0" * 64]
    else:
        rec["digests"] = digests
    code, out = replay_with(rules, tmp_path, rec)
    assert code == X.RECORD
    assert f"has {len(rec['digests'])} digests for 12 actions" in out


def test_replay_without_digests_warns_that_nothing_was_checked(rules, record, tmp_path):
    rec = json.loads(record.read_text())
    del rec["digests"]
    code, out = replay_with(rules, tmp_path, rec)
    assert code == 0
    assert "replayed 12 actions; 0 digests match" in out
    assert "warning: the record has no digests" in out


# ---------------------------------------------------------------------------- item 13


@pytest.mark.parametrize(("field", "value", "message"), [
    ("scores", 5, "'scores' must be a list of integers or null"),
    ("winners", 7, "'winners' must be a list of integers or null"),
    ("scores", [1, "2"], "'scores' must be a list of integers or null"),
    ("winners", [True], "'winners' must be a list of integers or null"),
    ("variant", ["a", "list"], "'variant' must be a string or null"),
    ("variant", 3, "'variant' must be a string or null"),
    ("rules_digest", {"x": 1}, "'rules_digest' must be a string or null"),
    ("params", {"rounds": [1]}, "'params' must be an object of ints, bools and strings"),
    ("params", [1], "'params' must be an object of ints, bools and strings"),
    ("players", True, "missing or bad 'players'"),
    ("players", "2", "missing or bad 'players'"),
    ("actions", [1, 2], "'actions' must be a list of strings"),
    ("digests", "abc", "'digests' must be a list of strings"),
    ("rulelang_record", 2, "unsupported rulelang_record version 2"),
])
def test_replay_mistyped_fields_are_messages(rules, record, tmp_path, field, value, message):
    rec = json.loads(record.read_text())
    rec[field] = value
    code, out = replay_with(rules, tmp_path, rec)
    assert code == X.RECORD
    assert f"is not a rulelang game record: {message}" in out


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 100_000 + "]" * 100_000, "not valid JSON: nested too deeply"),
    ('{"a": ' * 50_000 + "1" + "}" * 50_000, "not valid JSON: nested too deeply"),
    ("[1, 2", "not valid JSON"),
    ('{"players": ' + "9" * 5000 + "}", "not valid JSON"),
    ("[]", "top level is not an object"),
    ("null", "top level is not an object"),
])
def test_replay_hostile_json_is_a_message(rules, tmp_path, text, message):
    code, out = replay_with(rules, tmp_path, text)
    assert code == X.RECORD
    assert message in out


def test_replay_record_that_is_not_utf8(rules, tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"file": "caf\xe9"}')
    res = run("replay", rules, path)
    assert res.exit_code == X.RECORD
    assert "is not UTF-8 text" in res.output and "Traceback" not in res.output


def test_replay_with_parameters_or_variant_the_file_does_not_have(rules, record, tmp_path):
    rec = json.loads(record.read_text())
    for change, message in [
            ({"params": {"nope": 1}}, "error[E018]: unknown parameter 'nope'"),
            ({"params": {"rounds": True}}, "error[E019]: parameter 'rounds' is int; True does"),
            ({"variant": "nope"}, "error[E026]: unknown variant 'nope'"),
            ({"players": 9}, "edited.json: Steps takes 2-3 players, not 9")]:
        code, out = replay_with(rules, tmp_path, dict(rec, **change))
        assert code == X.RECORD, change
        assert message in out, (change, out)


@pytest.mark.parametrize("command", ["simulate", "play", "compile"])
def test_define_with_a_huge_integer_is_a_usage_error(rules, tmp_path, command):
    extra = {"simulate": ["-p", "2"], "play": ["-p", "random,random"],
             "compile": ["-o", tmp_path / "x.py"]}[command]
    res = run(command, rules, "-D", "rounds=" + "7" * 5000, *extra)
    assert res.exit_code == X.USAGE
    assert "rounds: integer too long (5000 characters)" in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("value, hint", [("benelx", "Benelux"), ("CENTRALEUROPE", "CentralEurope")])
def test_an_enum_define_that_does_not_fit_lists_the_members(value, hint):
    path = os.path.join(os.path.dirname(__file__), "..", "rules", "powergrid.rules")
    res = run("simulate", path, "-p", "3", "-n", "1", "-D", f"map={value}")
    assert res.exit_code == X.USAGE
    assert res.output.endswith(
        f"<command line>: error[E019]: parameter 'map' is Map; '{value}' does not fit\n"
        f"  note: did you mean '{hint}'?\n"
        "  note: Map: Benelux, CentralEurope\n")


def test_unicode_digits_in_a_define_are_not_numbers(rules):
    res = run("simulate", rules, "-p", "2", "-n", "1", "-D", "rounds=\u0663")
    assert res.exit_code == X.USAGE
    assert "error[E019]: parameter 'rounds' is int; '\u0663' does not fit" in res.output


def test_non_utf8_file_name_on_the_compiled_back_end(tmp_path):
    path = tmp_path / os.fsdecode(b"st\xe9ps.rules")
    path.write_text(GAME, encoding="utf-8")
    res = run("simulate", path, "-p", "2", "-n", "3", "--backend", "compiled")
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output
    game = rulelang.load(path, backend="compiled")
    assert game.new_game(2).current_player == rulelang.CHANCE


# ---------------------------------------------------------------------------- item 11


def test_play_survives_answers_that_look_like_numbers(rules, tmp_path):
    out = tmp_path / "game.json"
    bad = ["\u00b2", "\u2460", "\u0663", "9" * 5000, "0", "-1", "3"]
    answers = "\n".join(bad + ["1", "2", "1"]) + "\n"
    res = run("play", rules, "-p", "human,random", "-D", "rounds=3", "--seed", "2",
              "--record", out, input=answers)
    assert "Traceback" not in res.output
    assert res.exit_code == 0, res.output
    assert f"no action numbered {'9' * 12}..." in res.output
    assert "no action numbered 0" in res.output and "no action numbered 3" in res.output
    assert res.output.count("not legal now") == 4  # ², ①, ٣ and -1 are not action strings
    rec = json.loads(out.read_text())
    mine = [a for i, a in enumerate(rec["actions"]) if a.startswith("take") and i % 4 == 1]
    assert mine == ["take(1)", "take(2)", "take(1)"]
    assert run("replay", rules, out).exit_code == 0


def test_play_writes_the_record_when_the_rules_fault(tmp_path):
    path = tmp_path / "faulty.rules"
    path.write_text(FAULTY, encoding="utf-8")
    out = tmp_path / "game.json"
    res = run("play", path, "-p", "human,human", "--seed", "1", "--record", out,
              input="2\n")
    assert res.exit_code == X.FAULT
    assert "division by zero" in res.output and "Traceback" not in res.output
    rec = json.loads(out.read_text())
    assert len(rec["actions"]) == 1 and rec["actions"][0].startswith("die(")
    assert rec["scores"] is None


# ---------------------------------------------------------------------------- faults quoted

# A fault in every game: line 13 is `          total[p] += k // (k - k)`, at column 23.
ZERO = GAME.replace("total[p] += k * d", "total[p] += k // (k - k)")
ZERO_EXCERPT = ("   13 |           total[p] += k // (k - k)\n"
                "                              ^\n")


@pytest.mark.parametrize("options", [["--backend", "interpreter"], ["--backend", "compiled"],
                                     ["--jobs", "2"]])
def test_a_fault_in_simulate_quotes_its_source_line(tmp_path, options):
    """simulate printed only `file:line:col: message` and the note, without the line."""
    from rulelang import sim

    path = tmp_path / "zero.rules"
    path.write_text(ZERO, encoding="utf-8")
    res = run("simulate", path, "-p", "2", "-n", "2", *options)
    assert res.exit_code == X.FAULT
    assert res.stderr == (f"{path}:13:23: fault: division by zero\n" + ZERO_EXCERPT
                          + f"  note: in simulated game 0 (seed {sim.game_seed(0, 0)})\n")


def test_a_fault_in_play_and_replay_quotes_its_source_line(tmp_path, record):
    path = tmp_path / "zero.rules"
    path.write_text(ZERO, encoding="utf-8")
    res = run("play", path, "-p", "random,random", "--seed", "1")
    assert res.exit_code == X.FAULT
    assert res.stderr == f"{path}:13:23: fault: division by zero\n" + ZERO_EXCERPT
    res = run("replay", path, record)
    assert res.exit_code == X.RECORD
    first = json.loads(record.read_text())["actions"][1]
    assert res.stderr.endswith(f"error: actions[1] {first!r}: {path}:13:23: fault: division "
                               "by zero\n" + ZERO_EXCERPT)


def test_a_fault_in_a_file_changed_since_is_shown_without_the_line(tmp_path):
    from rulelang.errors import fault_text

    path = tmp_path / "zero.rules"
    path.write_text(ZERO, encoding="utf-8")
    err = rulelang.RulesRuntimeError("division by zero", f"{path}:13:23")
    assert fault_text(err) == f"{path}:13:23: fault: division by zero\n" + ZERO_EXCERPT.rstrip()
    path.write_text("game Short\n", encoding="utf-8")
    assert fault_text(err) == f"{path}:13:23: fault: division by zero"
    path.unlink()
    err.add_note("in simulated game 3 (seed 7)")
    assert fault_text(err) == (f"{path}:13:23: fault: division by zero\n"
                               "  note: in simulated game 3 (seed 7)")


LOAD_NOTE = ("  note: found while loading the rules (working out parameters, constants, enum "
             "fields and table values)\n")


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_a_fault_while_loading_is_a_rules_error(tmp_path, backend):
    """A table row `1 => 1 // 0` gave `file:4:31: division by zero` and exit code 5 (a fault
    in a game), not a refused file (3) with its line quoted."""
    path = tmp_path / "dup.rules"
    path.write_text(GAME.replace("state {", "table t(n: int) -> int { 1 => 1 // 0 }\nstate {"),
                    encoding="utf-8")
    expected = (f"{path}:4:31: error[E039]: division by zero\n"
                "    4 | table t(n: int) -> int { 1 => 1 // 0 }\n"
                "                                      ^\n" + LOAD_NOTE)
    res = run("check", path, "--backend", backend)
    assert (res.exit_code, res.stderr) == (X.RULES, expected)
    for args in (["simulate", path, "-p", "2", "-n", "2", "--backend", backend],
                 ["play", path, "-p", "random,random", "--backend", backend]):
        res = run(*args)
        assert (res.exit_code, res.stderr) == (X.RULES, expected), args


def test_a_table_miss_shows_one_key_bare_and_several_in_parentheses(backend):
    # an enum key by its member's name (it was its index: `(1, 2)` for `(Green, 2)`)
    text = GAME.replace("state {", "enum Color { Red, Green, Blue }\n"
                                   "table t(n: int) -> int { 1 => 10 }\n"
                                   "table u(n: int, m: int) -> int { (1, 1) => 10 }\n"
                                   "table v(c: Color, n: int) -> int { (Red, 1) => 10 }\n"
                                   "table w(c: Color) -> int { Red => 10 }\nstate {")
    for call, message in (("t(k + 2)", "table 't' has no row for 3"),
                          ("u(k + 2, d)", "table 'u' has no row for (3, 1)"),
                          ("v(Green, d)", "table 'v' has no row for (Green, 1)"),
                          ("w(Blue)", "table 'w' has no row for Blue")):
        game = rulelang.load_text(text.replace("k * d", call), "rows.rules", backend=backend)
        s = game.new_game(2)
        s.apply("die(1)")
        with pytest.raises(rulelang.RulesRuntimeError) as info:
            s.apply("take(1)")
        assert info.value.message == message


def test_play_interrupted_by_ctrl_c(rules, tmp_path):
    out = tmp_path / "game.json"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulelang.cli", "play", str(rules), "-p", "human,random",
         "--seed", "1", "--record", str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        preexec_fn=sigint_as_in_a_terminal)
    seen = b""
    deadline = time.monotonic() + 120
    while b"P0> " not in seen and time.monotonic() < deadline:
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        seen += chunk
    assert b"P0> " in seen, seen
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == X.INTERRUPTED, err
    assert b"interrupted" in err and b"Traceback" not in err
    assert json.loads(out.read_text())["actions"][0].startswith("die(")


# ---------------------------------------------------------------------------- item 17


BOOL_KEYS = """\
game BoolKeys
players 2..2
table t(b: bool, n: int) -> int { (true, 1) => 10, (false, _) => 20, (true, _) => 30 }
table u(b: bool) -> int { true => 1, false => 2 }
table v(b: bool) -> int { true => 5 }
state {
  s: int[player] = 0
}
flow {
  for p in players {
    choose p {
      pick(b: bool, n: int in 0..1) {
        s[p] += t(b, n) + u(b) + 100 * u(not b)
      }
      miss() {
        s[p] += v(false)
      }
    }
  }
}
score p => s[p]
"""


def test_bool_table_keys(backend):
    game = rulelang.load_text(BOOL_KEYS, "bool_keys.rules", backend=backend)
    scores = {}
    for action in ("pick(false, 0)", "pick(false, 1)", "pick(true, 0)", "pick(true, 1)"):
        s = game.new_game(2)
        s.apply(action)
        scores[action] = s.scores()[0]
    assert scores == {"pick(false, 0)": 122, "pick(false, 1)": 122, "pick(true, 0)": 231,
                      "pick(true, 1)": 211}
    s = game.new_game(2)
    with pytest.raises(rulelang.RulesRuntimeError) as info:
        s.apply("miss()")
    assert info.value.location == "bool_keys.rules:16:17"
    assert info.value.message == "table 'v' has no row for false"


def test_bool_table_keys_still_refuse_other_names():
    bad = BOOL_KEYS.replace("true => 1, false => 2", "yes => 1, false => 2")
    with pytest.raises(rulelang.RulesError) as info:
        rulelang.check_text(bad, "bool_keys.rules")
    (d,) = info.value.diagnostics
    assert (d.code, d.message, d.span.line) == ("E012", "'yes' is not a value of bool", 4)


# ---------------------------------------------------------------------------- exit codes


def test_exit_codes_are_distinct():
    codes = [X.OK, X.FAILURE, X.USAGE, X.RULES, X.RECORD, X.FAULT, X.INTERRUPTED]
    assert len(set(codes)) == len(codes)
    assert (X.USAGE, X.RULES, X.RECORD, X.FAULT, X.INTERRUPTED) == (2, 3, 4, 5, 130)


def test_exit_codes_of_every_command(rules, record, tmp_path):
    syntax = tmp_path / "syntax.rules"
    syntax.write_text("game\n", encoding="utf-8")
    start = tmp_path / "start.rules"
    start.write_text(FAULT_AT_START, encoding="utf-8")
    missing = tmp_path / "missing.rules"
    bad_record = tmp_path / "bad.json"
    bad_record.write_text("{}", encoding="utf-8")
    cases = [
        (["check", rules], X.OK),
        (["check", syntax], X.RULES),
        (["check", missing], X.RULES),
        (["check", rules, syntax], X.RULES),
        (["check"], X.USAGE),
        (["nonsense"], X.USAGE),
        (["simulate", rules, "-p", "2", "-n", "2"], X.OK),
        (["simulate", rules, "-p", "2", "--bogus"], X.USAGE),
        (["simulate", rules, "-p", "9"], X.USAGE),
        (["simulate", rules, "-p", "2", "-D", "rounds"], X.USAGE),
        (["simulate", rules, "-p", "2", "-D", "nope=1"], X.USAGE),
        (["simulate", rules, "-p", "2", "-D", "rounds=true"], X.USAGE),
        (["simulate", rules, "-p", "2", "--variant", "nope"], X.USAGE),
        (["simulate", syntax, "-p", "2"], X.RULES),
        (["simulate", missing, "-p", "2"], X.RULES),
        (["simulate", start, "-p", "2"], X.FAULT),
        (["simulate", rules, "-p", "2", "-n", "1", "--json", tmp_path / "no" / "s.json"],
         X.FAILURE),  # found before any game is played, still an unwritable output
        (["play", start, "-p", "random,random"], X.FAULT),
        (["play", syntax, "-p", "random,random"], X.RULES),
        (["play", rules, "-p", "random,robot"], X.USAGE),
        (["replay", rules, record], X.OK),
        (["replay", rules, bad_record], X.RECORD),
        (["replay", rules, tmp_path / "none.json"], X.RECORD),
        (["replay", syntax, record], X.RULES),
        (["replay", start, record], X.FAULT),
        (["compile", rules, "-o", tmp_path / "e.py"], X.OK),
        (["compile", syntax, "-o", tmp_path / "e.py"], X.RULES),
        (["compile", rules, "-D", "nope=1", "-o", tmp_path / "e.py"], X.USAGE),
        (["compile", rules, "-o", tmp_path / "no" / "e.py"], X.FAILURE),
        (["cache", "info"], X.OK),
        (["describe", rules], X.OK),
        (["describe", syntax], X.RULES),
        (["compare", syntax, "-p", "2", "-n", "2", "-A", "rounds=1"], X.RULES),
        (["compare", rules, "-p", "2", "-n", "2"], X.USAGE),  # the two arms are the same
        (["compare", start, "-p", "2", "-n", "2", "-A", "rounds=1"], X.FAULT),
        (["sweep", syntax, "-p", "2", "--param", "rounds=1..2", "-n", "2"], X.RULES),
        (["sweep", rules, "-p", "2", "--param", "nope=1..2", "-n", "2"], X.USAGE),
        (["tournament", syntax, "--bots", "greedy,random", "-n", "2"], X.RULES),
    ]
    got = []
    for args, _code in cases:
        res = run(*args)
        assert "Traceback" not in res.output, args
        got.append((args, res.exit_code))
    assert got == [(args, code) for args, code in cases]


def test_play_quit_and_end_of_input_are_failures(rules):
    assert run("play", rules, "-p", "human,random", input="q\n").exit_code == X.FAILURE
    assert run("play", rules, "-p", "human,random", input="").exit_code == X.FAILURE


def test_console_script_maps_usage_errors_and_ctrl_c(rules, tmp_path):
    env = dict(os.environ, RULELANG_CACHE=str(tmp_path / "c"))
    res = subprocess.run([sys.executable, "-m", "rulelang.cli", "simulate", str(rules),
                          "--bogus"], capture_output=True, text=True, env=env)
    assert res.returncode == X.USAGE and "No such option '--bogus'" in res.stderr
    res = subprocess.run([sys.executable, "-m", "rulelang.cli", "check", str(rules)],
                         capture_output=True, text=True, env=env)
    assert res.returncode == X.OK and res.stdout.startswith("ok: ")
    res = subprocess.run([sys.executable, "-m", "rulelang.cli", "replay", str(rules),
                          str(tmp_path / "none.json")], capture_output=True, text=True, env=env)
    assert res.returncode == X.RECORD and "cannot read" in res.stderr
