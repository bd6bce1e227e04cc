"""Runaway rules are stopped (issue 7 item 7): a loop without a decision, a huge collection or a
huge int is a RulesRuntimeError naming the .rules location and the limit, the same on both back
ends, instead of a hang, a MemoryError, or a ValueError in digest()."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import rulelang
from rulelang import exitcodes as X
from rulelang.cli import cli

SMALL = {"max_loop_steps": 50, "max_collection": 1000, "max_int_digits": 30}

HEAD = """game Runaway
players 2..2
param big: int = 1000000000000
state {
  x: int = 2
  xs: list<int> = [1, 2]
  log: list<int> = []
}
"""
TAIL = """
score p => x
"""


def load(flow: str, backend: str, limits=None, extra: str = ""):
    text = HEAD + extra + "flow {\n" + flow + "\n}" + TAIL
    return rulelang.load_text(text, "runaway.rules", backend=backend, limits=limits)


def fault(flow: str, backend: str, limits=SMALL, extra: str = "", players: int = 2):
    game = load(flow, backend, limits, extra)
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        game.new_game(players)
    return err.value.location, err.value.message


def loop_message(n: int) -> str:
    return f"loop went round more than {n} times without a decision (limit max_loop_steps)"


# ---- loops --------------------------------------------------------------------------------------
def test_while_true_in_the_flow_stops_with_the_default_limits(backend):
    """`while true { }` hung new_game on both back ends."""
    assert fault("  while true { }", backend, limits=None) == (
        "runaway.rules:10:3", loop_message(100_000))


def test_a_flow_while_counts_since_the_last_pause(backend):
    """A flow loop that pauses in every round may go round more often than the limit; one that
    stops pausing is caught max_loop_steps body starts after its last decision."""
    flow = """  while true {
    if x < 60 {
      choose players[0] { go() { x += 1 } }
    }
  }"""
    game = load(flow, backend, SMALL)
    s = game.new_game(2)
    for _ in range(57):
        s.apply("go()")
    assert s.get_var("x") == 59
    before = s.digest()
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("go()")
    assert (err.value.location, err.value.message) == ("runaway.rules:10:3", loop_message(50))
    assert s.digest() == before and s.legal_actions() == ["go()"]


def test_a_statement_while_counts_one_execution(backend):
    """Inside a statement (here a def), each execution of a `while` has its own count: the
    inner loop below starts 40 bodies per execution, 120 in all, under a limit of 50."""
    extra = """def spin(n: int) -> int {
  let i = 0
  while i < n {
    let j = 0
    while j < 40 { j += 1 }
    i += 1
  }
  return i
}
def forever() -> int {
  while true { }
  return 0
}
"""
    game = load("  x = spin(3)\n  choose players[0] { go() { x = forever() } }", backend,
                SMALL, extra)
    s = game.new_game(2)
    assert s.get_var("x") == 3
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("go()")
    assert (err.value.location, err.value.message) == ("runaway.rules:19:3", loop_message(50))
    assert fault("  x = spin(51)", backend, extra=extra) == ("runaway.rules:11:3",
                                                             loop_message(50))


# ---- collections --------------------------------------------------------------------------------
def size_message(n: int, limit: int = 1000) -> str:
    return f"collection of {n} elements is over the limit of {limit} (max_collection)"


@pytest.mark.parametrize("flow, where, size", [
    ("  for i in 1..big { x += 1 }", "10:12", 1000000000000),
    ("  for i in 1..1000000000000 { }", "10:12", 1000000000000),
    ("  x = len(0..x * 1000)", "10:11", 2001),
    ("  x = 1001\n  for i in 1..x step 1 { }", "11:12", 1001),
    ("  choose players[0] { bid(v: int in 0..big step 2) { x = v } }", "10:37", 500000000001),
    ("  x = sum(i for i in 0..big * 10)", "10:22", 10000000000001),
])
def test_a_huge_range_is_a_fault(backend, flow, where, size):
    """1..10**12 was a raw MemoryError."""
    assert fault(flow, backend) == (f"runaway.rules:{where}", size_message(size))


def test_the_default_collection_limit(backend):
    assert fault("  for i in 1..big { }", backend, limits=None) == (
        "runaway.rules:10:12", size_message(1000000000000, 1_000_000))


def test_lists_that_double_are_stopped(backend):
    assert fault("  while true { xs = xs + xs }", backend) == ("runaway.rules:10:21",
                                                              size_message(1024))
    assert fault("  while true { for v in xs { push v to xs } }", backend) == (
        "runaway.rules:10:30", size_message(1001))


# ---- ints ---------------------------------------------------------------------------------------
def int_message(digits: int = 30) -> str:
    return f"integer over the limit of {digits} digits (max_int_digits)"


@pytest.mark.parametrize("flow, where", [
    ("  while true { x = x * x }", "11:20"),
    ("  while true { x = x + x }", "11:20"),
    ("  while true { x += x }", "11:16"),
    ("  while true { let y = 0 - x - x\n  x = y }", "11:24"),
    ("  while true { xs = [v + v for v in xs] }", "11:22"),
    ("  while true { xs = [xs[0] + xs[0]] }", "11:22"),
    ("  while true { push xs[len(xs) - 1] + x to xs\n x = xs[len(xs) - 1] }", "11:21"),
    ("  while true { x = twice(x + x) }", "11:26"),
    ("  while true { x = twice(x) }", "11:20"),
])
def test_a_growing_int_is_stopped_where_it_is_kept(backend, flow, where):
    """Repeated `x = x * x` made digest() raise ValueError (over 4,300 digits)."""
    extra = "def twice(n: int) -> int = n + n\n"
    limits = dict(SMALL, max_loop_steps=1000)
    assert fault(flow, backend, limits, extra=extra) == (f"runaway.rules:{where}",
                                                         int_message())


def test_straight_line_sums_in_a_def_are_checked_where_the_result_is_kept(backend):
    """A def's lets outside loops that only add are not checked (they cannot run away); the
    def's result is, where it is kept. Lets in its loops are checked at once."""
    extra = """def double(n: int) -> int {
  let y = n + n
  return y
}
def spin(n: int) -> int {
  let y = n
  while true { y = y + y }
  return y
}
"""
    assert fault("  while true { x = double(x) }", backend, dict(SMALL, max_loop_steps=1000),
                 extra) == ("runaway.rules:19:20", int_message())
    assert fault("  x = spin(x)", backend, dict(SMALL, max_loop_steps=1000), extra) == (
        "runaway.rules:15:20", int_message())


def test_a_huge_int_only_used_as_an_index_is_shown_by_its_size(backend):
    """A product that is only used (here as an index) is not checked: it cannot escape into the
    state, and the fault message does not try to print 6,000 digits (Python would refuse)."""
    ten = "(" + " * ".join(["x"] * 10) + ")"
    flow = "  x = 99999999999999999999999999999\n  x = xs[" + " * ".join([ten] * 21) + "]"
    assert fault(flow, backend) == ("runaway.rules:11:7",
                                    "index <int of 20231 bits> out of range (size 2)")


@pytest.mark.parametrize("step, where", [("a[q] += 1", "11:5"), ("a[q] -= 1", "11:5"),
                                         ("a[q] += a[q]", "11:5"), ("a[q] -= 0 - 1", "11:5")])
def test_item_updates_are_stopped_on_the_side_they_cross(backend, step, where):
    """An array item updated by `+=`/`-=` is checked in a temporary (the compiled engine), on
    one side only when a literal is added or taken away: each way still stops at the limit."""
    start = "top" if "+" in step or "0 - 1" in step else "0 - top"
    text = f"""game Items
players 2..2
param top: int = 999999999999999999999999999997
state {{
  a: int[player] = 0
}}
flow {{
  let q: player = players[1]
  a[q] = {start}
  while true {{
    {step}
  }}
}}
score p => a[p]
"""
    game = rulelang.load_text(text, "items.rules", backend=backend, limits=SMALL)
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        game.new_game(2)
    assert (err.value.location, err.value.message) == (f"items.rules:{where}", int_message())


def test_the_default_int_limit_keeps_digest_and_scores_working(backend):
    game = load("  choose players[0] { go() { while true { x = x * x } } }", backend)
    s = game.new_game(2)
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.apply("go()")
    assert (err.value.location, err.value.message) == ("runaway.rules:10:47", int_message(100))
    assert len(s.digest()) == 64 and s.get_var("x") == 2


def test_scores_are_checked(backend):
    flow = "  x = 700000000000000000000000000000 - 1\n  x = x + 1 - 1"
    text = HEAD + "flow {\n" + flow + "\n}\nscore p => x + x\n"
    game = rulelang.load_text(text, "runaway.rules", backend=backend, limits=SMALL)
    s = game.new_game(2)
    assert s.is_terminal()
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        s.scores()
    assert (err.value.location, err.value.message) == ("runaway.rules:13:12", int_message())


def test_ints_a_program_starts_from_are_checked_at_load(backend):
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        load("  x = 1234567890123456789012345678901", backend, SMALL)
    assert (err.value.location, err.value.message) == ("runaway.rules:10:7", int_message())
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        load("  x = big", backend, dict(SMALL, max_int_digits=5))
    assert (err.value.location, err.value.message) == ("runaway.rules:3:18", int_message(5))


# ---- configuration ------------------------------------------------------------------------------
def test_limits_are_part_of_the_loaded_game(backend):
    """Two loads with different limits are two engines (the compiled one: two cache keys)."""
    flow = "  x = 0\n  while x < 80 { x += 1 }"
    tight = load(flow, backend, SMALL)
    loose = load(flow, backend, dict(SMALL, max_loop_steps=80))
    assert tight.limits == SMALL
    assert loose.limits == dict(SMALL, max_loop_steps=80)
    assert load(flow, backend).limits == {"max_loop_steps": 100_000, "max_collection": 1_000_000,
                                          "max_int_digits": 100}
    with pytest.raises(rulelang.RulesRuntimeError):
        tight.new_game(2)
    assert loose.new_game(2).get_var("x") == 80
    assert load(flow, backend, rulelang.Limits(max_loop_steps=80)).new_game(2).get_var("x") == 80


@pytest.mark.parametrize("limits, message", [
    ({"max_loops": 3}, "unknown limit 'max_loops'"),
    ({"max_loop_steps": 0}, "limit max_loop_steps must be a positive int, not 0"),
    ({"max_collection": True}, "limit max_collection must be a positive int, not True"),
    ({"max_int_digits": 5000}, "limit max_int_digits must be at most 1000"),
    ({"max_int_digits": 3}, r"limit max_collection must be below 10 \*\* max_int_digits"),
])
def test_bad_limits_are_refused(limits, message):
    with pytest.raises(ValueError, match=message):
        load("", "interpreter", limits)


def test_the_compiled_module_carries_its_limits():
    from rulelang import cache
    from rulelang.codegen import compile_program

    text = HEAD + "flow {\n  while true { }\n}" + TAIL
    program = rulelang.check_text(text, "runaway.rules", limits=SMALL)
    source = compile_program(program)
    assert "Limits: max_loop_steps=50, max_collection=1000, max_int_digits=30" in source
    assert "LIMIT_LOOP_STEPS = 50\n" in source
    default = rulelang.check_text(text, "runaway.rules")
    assert cache.entry_meta(program)["limits"] == SMALL
    assert cache.entry_meta(program) != cache.entry_meta(default)


def test_simulate_reports_a_runaway_game_as_a_fault(tmp_path):
    """`simulate` (compiled, the default) hung with no output."""
    path = tmp_path / "spin.rules"
    path.write_text(HEAD + "flow {\n  choose players[0] { go() { while x > 0 { } } }\n}" + TAIL,
                    encoding="utf-8")
    res = CliRunner().invoke(cli, ["simulate", str(path), "-p", "2", "-n", "3"])
    assert res.exit_code == X.FAULT, res.output
    assert "spin.rules:10:30" in res.output and loop_message(100_000) in res.output
    assert "Traceback" not in res.output


def test_records_stay_json(backend):
    """A game stopped at a limit leaves a state whose JSON is still complete."""
    game = load("  while true { choose players[0] { go() { x = x * 1000000000000000000000 } } }",
                backend, SMALL)
    s = game.new_game(2)
    s.apply("go()")
    with pytest.raises(rulelang.RulesRuntimeError):
        s.apply("go()")
    assert json.loads(s.to_json())["vars"]["x"] == 2000000000000000000000


def test_a_define_over_the_int_limit_is_a_usage_error(tmp_path):
    """-D big=<150 digits> gave `runaway.rules:3:7: integer over the limit of 100 digits
    (max_int_digits)` and exit code 5: a fault at the declaration, not naming -D."""
    path = tmp_path / "runaway.rules"
    path.write_text(HEAD + "flow {\n  x = big\n}" + TAIL, encoding="utf-8")
    huge = "9" * 150
    expected = ("<command line>: error[E019]: -D big=999999999999...9999 has 150 digits, over "
                "the limit of 100 (max_int_digits)\n")
    for args in (["simulate", path, "-p", "2", "-n", "1", "-D", f"big={huge}"],
                 ["simulate", path, "-p", "2", "-n", "1", "-D", f"big={huge}", "--backend",
                  "interpreter"],
                 ["play", path, "-p", "random,random", "-D", f"big={huge}"],
                 ["simulate", path, "-p", "2", "-n", "1", "-D", "big=-123456789012345", "-L",
                  "max_int_digits=14", "-L", "max_collection=1000"]):
        res = CliRunner().invoke(cli, [str(a) for a in args])
        want = expected if "-L" not in args else (
            "<command line>: error[E019]: -D big=-123456789012345 has 15 digits, over the limit "
            "of 14 (max_int_digits)\n")
        assert (res.exit_code, res.stderr) == (X.USAGE, want), args
    ok = CliRunner().invoke(cli, ["simulate", str(path), "-p", "2", "-n", "1", "-D",
                                  f"big={'9' * 100}"])
    assert ok.exit_code == 0, ok.output
