"""The interpreter's memo tables (defs and `when` tests) and its shared decision candidates:
a write drops exactly what read the variable written, and nothing stale is ever returned."""

from __future__ import annotations

import glob
import os
import random
from fractions import Fraction

import pytest

import rulelang
from rulelang import ast
from rulelang.interpreter import engine
from rulelang.interpreter.reads import nodes
from tests.conftest import ROOT, RULES

MEMO = """
game Memo
players 2..2
state {
  n: int = 0
  m: int = 0
  log: list<int> = []
}
def twice() -> int = n * 2
def plus(k: int) -> int = n + k
def via() -> int = twice() + 1
def other() -> int = m
flow {
  while n < 3 {
    choose players[0] {
      # a def read before and after a write in the same option body
      go() when twice() < 10 {
        push twice() to log
        n += 1
        push twice() to log
        push via() to log
      }
      # the parameters are part of a def's key
      two() { push plus(1) to log  push plus(2) to log  n += 1 }
      # a fault after a write: the write and what was remembered after it are undone
      bad() { n = 5  push twice() to log  n = 1 // (n - n) }
      # a write to m drops other() but not twice()
      bump() when twice() < 2 { m += 1  push other() to log  push twice() to log }
    }
  }
  for i in 0..2 {
    choose players[1] {
      # a flow local is part of a `when` test's key
      pick() when i > 0 and other() >= 0 { log = log }
      skip() { log = log }
    }
  }
}
score p => n
"""


@pytest.fixture
def verify(monkeypatch):
    monkeypatch.setattr(engine, "VERIFY_MEMO", True)


def memo_game():
    return rulelang.load_text(MEMO, "memo.rules", backend="interpreter")


def test_a_def_read_after_a_write_in_the_same_option_body_sees_the_write():
    s = memo_game().new_game(2)
    s.apply("go()")
    assert s.get_var("log") == [0, 2, 3]
    s.apply("go()")
    assert s.get_var("log") == [0, 2, 3, 2, 4, 5]


def test_a_defs_parameters_are_part_of_its_key():
    s = memo_game().new_game(2)
    s.apply("two()")
    assert s.get_var("log") == [1, 2]


def test_a_write_drops_only_the_tables_of_what_reads_it():
    s = memo_game().new_game(2)
    twice = s.game.program.defs["twice"]
    other = s.game.program.defs["other"]
    s.apply("bump()")
    assert s.get_var("log") == [1, 0]
    s._memo[twice][()] = 99  # a planted value: only a write to n may drop it
    s.apply("bump()")  # writes m: other() is redone, twice() is not
    assert s.get_var("log") == [1, 0, 2, 99]
    assert other in s._memo
    s.apply("two()")  # writes n
    assert s._memo[twice] == {(): 2}  # dropped, then redone for the next decision's tests


def test_a_when_test_is_redone_after_a_write_to_what_it_reads():
    s = memo_game().new_game(2)
    assert s.legal_actions() == ["go()", "two()", "bad()", "bump()"]
    s.apply("two()")  # n = 1: bump() is no longer legal, go() still is
    assert s.legal_actions() == ["go()", "two()", "bad()"]


def test_a_flow_local_is_part_of_a_when_tests_key():
    s = memo_game().new_game(2)
    for _ in range(3):
        s.apply("two()")
    assert s.current_player == 1
    assert s.legal_actions() == ["skip()"]  # i = 0
    s.apply("skip()")
    assert s.legal_actions() == ["pick()", "skip()"]  # i = 1, no state written in between
    s.apply("pick()")
    assert s.legal_actions() == ["pick()", "skip()"]  # i = 2


def test_a_fault_undoes_what_was_remembered_after_a_write():
    s = memo_game().new_game(2)
    before = s.digest()
    with pytest.raises(rulelang.RulesRuntimeError, match="division by zero"):
        s.apply("bad()")
    assert s.digest() == before
    s.apply("go()")
    assert s.get_var("log") == [0, 2, 3]


def test_clones_and_set_vars_never_see_each_others_values():
    s = memo_game().new_game(2)
    s.apply("go()")
    c = s.clone()
    c.apply("go()")
    c.apply("go()")
    assert c.get_var("n") == 3 and s.get_var("n") == 1
    s.apply("two()")
    assert s.get_var("log") == [0, 2, 3, 2, 3]
    s.set_vars({"n": 0})
    assert "bump()" in s.legal_actions()
    s.apply("go()")
    assert s.get_var("log")[-3:] == [0, 2, 3]


def test_the_candidates_are_shared_until_the_state_changes():
    s = memo_game().new_game(2)
    first = s._choices()
    assert s.legal_actions() == ["go()", "two()", "bad()", "bump()"]
    assert s.num_choices() == 4 and s.observation(0)["legal_actions"] == s.legal_actions()
    assert s._choices() is first
    s.set_vars({"n": 2})
    assert s._choices() is not first
    assert s.legal_actions() == ["go()", "two()", "bad()"]


RULES_FILES = sorted(glob.glob(os.path.join(RULES, "*.rules")))


@pytest.mark.parametrize("path", RULES_FILES, ids=os.path.basename)
def test_the_static_reads_cover_every_read_a_def_makes(path, monkeypatch):
    """Every state variable a def reads while a game is played is in its static read set (a
    missing one would leave a stale table after a write to it)."""
    game = rulelang.load(path, backend="interpreter")
    seen: dict[str, set] = {}
    stack: list[str] = []
    run_def, init = engine._Evaluator._run_def, engine._Evaluator.__init__

    def spy_run(self, d, args):
        stack.append(d.name)
        try:
            return run_def(self, d, args)
        finally:
            stack.pop()

    class SpyVars:
        """The state's variables, each read noted for the defs being run."""

        def __init__(self, vars):
            self.vars = vars

        def __getitem__(self, name):
            for d in stack:
                seen.setdefault(d, set()).add(name)
            return self.vars[name]

    def spy_init(self, game, state):
        init(self, game, state)
        self.vars = SpyVars(self.vars)

    monkeypatch.setattr(engine._Evaluator, "_run_def", spy_run)
    monkeypatch.setattr(engine._Evaluator, "__init__", spy_init)
    _play(game, seed=3)
    assert seen
    for d, names in seen.items():
        assert names <= game.reads.of_def(d), (d, names - game.reads.of_def(d))


def _play(game, seed: int, steps: int = 400):
    rng = random.Random(seed)
    s = game.new_game(min(max(3, game.min_players), game.max_players))
    for _ in range(steps):
        if s.is_terminal():
            break
        s.legal_actions()
        s.apply_index(rng.randrange(s.num_choices()))
    return s


@pytest.mark.parametrize("path", RULES_FILES, ids=os.path.basename)
def test_no_stale_value_on_any_rules_file(verify, path):
    """With VERIFY_MEMO every remembered value is checked against a fresh evaluation."""
    game = rulelang.load(path, backend="interpreter")
    for seed in range(2):
        _play(game, seed)


def test_no_stale_value_in_random_programs(verify):
    """Also the candidate lists kept per key (Game.value_keys): half of these programs have
    an option whose lists the interpreter keeps."""
    from tests.randprog.gen import generate
    from tests.randprog.run import play_both

    kept = 0
    for seed in range(40):
        case = generate(seed)
        kept += bool(_kept_options(rulelang.load_text(case.text, "r.rules",
                                                      backend="interpreter")))
        for config in case.configs:
            failure = play_both(case.text, config)
            assert failure is None or failure.kind not in ("crash",), (seed, str(failure))
    assert kept >= 15, kept


def test_the_memo_tests_fail_without_invalidation(monkeypatch):
    """The tests above are not vacuous: with writes that drop nothing they fail."""
    def write(self, name, value):
        self.vars[name] = value

    monkeypatch.setattr(engine.State, "write", write)
    with pytest.raises(AssertionError):
        test_a_def_read_after_a_write_in_the_same_option_body_sees_the_write()
    with pytest.raises(AssertionError):
        test_a_when_test_is_redone_after_a_write_to_what_it_reads()
    monkeypatch.setattr(engine.State, "write_at", lambda self, name, i, value: write(self, name,
                                                                                   value))
    with pytest.raises(AssertionError):
        test_a_write_through_one_index_drops_only_the_entries_that_read_it()
    with pytest.raises(AssertionError):
        test_an_options_candidates_are_remembered_until_what_they_read_changes(monkeypatch)


EARLY = """
game Early
players 2..2
state {
  xs: list<int> = [1, 2, 3]
  n: int = 0
}
flow {
  choose players[0] {
    late_fault() { n = (if any(xs[i] > 0 for i in 0..3) then 1 else 0) }
    fine() { n = (if all(x > 1 for x in xs) then 1 else 2) }
  }
}
score p => n
"""


def test_any_stops_early_only_when_no_element_can_fault(backend):
    """xs[0] > 0 decides the first `any`, but xs[3] faults later: the fault is reported."""
    game = rulelang.load_text(EARLY, "early.rules", backend=backend)
    s = game.new_game(2)
    with pytest.raises(rulelang.RulesRuntimeError, match=r"index 3 out of range \(size 3\)"):
        s.apply("late_fault()")
    s.apply("fine()")
    assert s.scores() == [2, 2]
    if backend == "interpreter":
        nf = game.never_faults
        found = {a.func: nf(a.elem) for a in nodes(game.program.flow) if isinstance(a, ast.Agg)}
        assert found == {"any": False, "all": True}


def test_a_write_of_an_equal_value_keeps_the_tables_that_read_it():
    s = memo_game().new_game(2)
    twice = s.game.program.defs["twice"]
    s.legal_actions()  # the when tests call twice()
    s._memo[twice][()] = 99  # a planted value: a write that changes n must drop it
    s.set_vars({"n": 0})  # n was 0: nothing that reads n can have changed
    assert s._memo[twice] == {(): 99}
    s.set_vars({"n": 1})  # dropped, then redone for the legal actions set_vars works out
    assert s._memo[twice] == {(): 2}


def _histories(path: str, seeds) -> tuple[list, set]:
    game = rulelang.load(path, backend="interpreter")
    out = []
    for seed in seeds:
        s = _play(game, seed)
        out.append((s.history, s.digest()))
    return out, {k.name if isinstance(k, ast.DefDecl) else k.span.line for k in game.memo_off}


def test_tables_found_useless_on_trial_are_left_out_and_change_nothing(monkeypatch):
    """A def or `when` test whose first tables find almost nothing gets no more tables: the
    games are move for move the ones played with every table kept."""
    path = os.path.join(RULES, "acquire.rules")
    monkeypatch.setattr(engine, "TRIAL_LOOKUPS", 10 ** 9)  # on trial for ever: tables kept
    kept, off = _histories(path, range(3))
    assert off == set()
    monkeypatch.setattr(engine, "TRIAL_LOOKUPS", 20)
    tried, off = _histories(path, range(3))
    assert {"founds_eighth", "stuck"} <= off
    assert "price" not in off  # found again and again
    assert tried == kept


def test_chance_outcomes_each_once_or_weighted_by_repeats():
    text = """
game Draws
players 2..2
state { got: list<int> = [] }
flow {
  chance a(x: int in [3, 1, 2])
  push x to got
  chance b(y: int in [5, 4, 5, 5])
  push y to got
}
score p => 0
"""
    for backend in ("interpreter", "compiled"):
        s = rulelang.load_text(text, "draws.rules", backend=backend).new_game(2)
        third = Fraction(1, 3)
        assert s.chance_outcomes() == [("a(3)", third), ("a(1)", third), ("a(2)", third)]
        assert s.chance_weights() is None
        s.apply("a(1)")
        assert s.chance_outcomes() == [("b(5)", Fraction(3, 4)), ("b(4)", Fraction(1, 4))]
        assert s.chance_weights() == [3, 1]
        s.apply("b(4)")
        assert s.get_var("got") == [1, 4]


INDEXED = """
game Indexed
players 3..3
state {
  cash: int[player] = 1
  pool: int[player][player] = 0
  log: list<int> = []
}
def mine(p: player) -> int = cash[p]
def via(p: player) -> int = mine(p) + 1
def first() -> int = mine(players[0])
def total() -> int = sum(cash[q] for q in players)
def held(p: player, q: player) -> int = pool[p][q]
flow {
  while len(log) < 50 {
    choose players[0] {
      pay(p: player) when via(p) > 0 { cash[p] += 1 }
      move(p: player, q: player) when held(p, q) >= 0 { pool[q][p] += 1 }
      note() { push total() + first() to log }
      same() { cash[players[1]] = cash[players[1]] }
    }
  }
}
score p => cash[p]
"""


def test_the_reads_at_an_index_its_key_gives_are_found():
    game = rulelang.load_text(INDEXED, "indexed.rules", backend="interpreter")
    at = game.reads.at_def
    assert at("mine") == (frozenset(), {"cash": frozenset({0})})
    assert at("via") == (frozenset(), {"cash": frozenset({0})})
    assert at("first") == (frozenset({"cash"}), {})  # mine(players[0]): not a parameter
    assert at("total") == (frozenset({"cash"}), {})  # q is the aggregate's own
    assert at("held") == (frozenset(), {"pool": frozenset({0})})
    auto = rulelang.load(os.path.join(RULES, "automobile.rules"), backend="interpreter")
    whole, by = auto.reads.at_def("can_build")  # p at 0, m at 1; rd_cost reads the frontier
    assert whole == {"frontier"}
    assert by == {"parts_at": {0}, "built": {0}, "cash": {0}, "rd": {0},
                  "owner": {1}, "closed": {1}, "factories": {1}}


def test_a_write_through_one_index_drops_only_the_entries_that_read_it():
    game = rulelang.load_text(INDEXED, "indexed.rules", backend="interpreter")
    d = game.program.defs
    s = game.new_game(3)
    s.legal_actions()  # via(p) for each p, held(p, q) for each pair
    assert s._memo[d["via"]] == {(0,): 2, (1,): 2, (2,): 2}
    s.apply("note()")  # total() and first() read cash wholly
    assert d["total"] in s._memo and d["first"] in s._memo
    s.apply("pay(1)")  # cash[1] changes: only what read it goes
    assert s._memo[d["via"]] == {(0,): 2, (1,): 3, (2,): 2}  # (1,) dropped, then redone
    assert s._memo[d["mine"]] == {(0,): 1, (1,): 2, (2,): 1}
    assert d["total"] not in s._memo and d["first"] not in s._memo
    s._memo[d["via"]][(0,)] = 99  # planted: only a write to cash[0] may drop it
    s.apply("same()")  # an equal value: nothing dropped
    s.apply("pay(2)")
    assert s._memo[d["via"]][(0,)] == 99
    s.apply("pay(0)")
    assert s._memo[d["via"]][(0,)] == 3 and s.get_var("cash") == [2, 2, 2]
    held = s._memo[d["held"]]
    before = dict(held)
    s.apply("move(0, 2)")  # pool[2][0] += 1: held(2, q) for every q goes, the rest stays
    assert {k: v for k, v in s._memo[d["held"]].items() if k[0] != 2} == \
        {k: v for k, v in before.items() if k[0] != 2}
    assert s._memo[d["held"]][(2, 0)] == 1


def test_index_reads_play_the_same_games_as_whole_tables_and_the_compiled_engine(
        monkeypatch, verify):
    """Every file and variant, tables kept all game (no trial) and every hit checked against a
    fresh evaluation: the final states are the compiled engine's."""
    from rulelang.sim import random_playout

    monkeypatch.setattr(engine, "TRIAL_LOOKUPS", 10 ** 9)
    for path in RULES_FILES:
        for variant in [None, *rulelang.load(path, backend="interpreter").variants]:
            interp = rulelang.load(path, variant=variant, backend="interpreter")
            comp = rulelang.load(path, variant=variant, backend="compiled")
            players = min(4, interp.max_players)
            a = random_playout(interp, players, 5, False)[0]
            b = random_playout(comp, players, 5, False)[0]
            assert a.digest() == b.digest(), (path, variant)


LISTED = """
game Listed
players 3..3
state {
  cash: int[player] = 2
  cap: int = 3
  log: list<int> = []
}
def afford(p: player, a: int, b: int) -> bool = a + b <= cash[p] and a + b <= cap
def risky(p: player, x: int, y: int) -> bool = 10 // (cash[p] - 7) >= x + y - 100
flow {
  while len(log) < 40 {
    for p in players {
      choose p {
        buy(a: int in 0..2, b: int in 0..2) when afford(p, a, b) {
          cash[p] -= a + b
          push a + b to log
        }
        earn(x: int in 1..2, y: int in 0..1) when risky(p, x, y) { cash[p] += x + y }
        squeeze() { cap -= 1 }
        rest() { push 0 to log }
      }
    }
  }
}
score p => cash[p]
"""


def _listing_table(s, name: str) -> dict:
    """The state's candidate-list table of the option called `name`."""
    return next(t for k, t in s._memo.items() if isinstance(k, engine._Listing)
                and any(o.name == name and o.when is k.when for o in _options(s.game)))


def _options(game) -> list:
    from rulelang.lower import ChooseAt

    return [o for ins in game.lowered.code if isinstance(ins, ChooseAt) for o in ins.node.options]


def test_an_options_candidates_are_remembered_until_what_they_read_changes(monkeypatch):
    """A two-parameter option with a def in its `when` test keeps its candidate lists per
    value of the outside locals they read (p here): a write to cash[q] drops only q's, a
    write to cap all of them, and a planted list is seen only while nothing dropped it."""
    monkeypatch.setattr(engine, "TRIAL_LOOKUPS", 10 ** 9)
    game = rulelang.load_text(LISTED, "listed.rules", backend="interpreter")
    s = game.new_game(3)
    assert s.legal_actions()[:6] == ["buy(0, 0)", "buy(0, 1)", "buy(0, 2)", "buy(1, 0)",
                                     "buy(1, 1)", "buy(2, 0)"]
    s.apply("rest()")  # player 1 decides next: its own list
    s.legal_actions()
    table = _listing_table(s, "buy")
    assert set(table) == {0, 1}
    table[0] = [(2, 2)]  # planted for player 0: seen again unless cash[0] or cap changes
    s.apply("buy(1, 0)")  # cash[1] = 1: player 1's list goes, player 0's stays
    assert set(_listing_table(s, "buy")) == {0, 2}
    s.apply("rest()")
    assert s.legal_actions()[0] == "buy(2, 2)"  # the planted list
    s.apply("squeeze()")  # cap = 2: every list goes
    s.apply("rest()")
    s.apply("rest()")
    assert "buy(2, 2)" not in s.legal_actions() and "buy(1, 1)" in s.legal_actions()
    assert "buy(2, 1)" not in s.legal_actions()


@pytest.mark.parametrize("trial", [None, 10 ** 9])
def test_a_listing_that_faults_is_not_remembered_and_both_back_ends_fault_alike(monkeypatch,
                                                                                 trial):
    """earn's `when` divides by cash[p] - 7: once player 0's lists are remembered at cash 6,
    cash 7 drops them and the listing faults on both back ends, with the same message and
    place, each time it is asked for (nothing remembered), the state left as it was."""
    if trial is not None:
        monkeypatch.setattr(engine, "TRIAL_LOOKUPS", trial)
    out = {}
    for backend in ("interpreter", "compiled"):
        s = rulelang.load_text(LISTED, "listed.rules", backend=backend).new_game(3)
        s.set_vars({"cash": [6, 2, 2]})
        legal = s.legal_actions()
        if backend == "interpreter":  # player 0's lists remembered
            assert any(isinstance(k, engine._Listing) for k in s._memo)
        faults = []
        for _ in range(2):
            with pytest.raises(rulelang.RulesRuntimeError) as e:
                s.set_vars({"cash": [7, 2, 2]})
            faults.append(str(e.value))
            assert s.get_var("cash") == [6, 2, 2] and s.legal_actions() == legal
        s.apply("earn(1, 0)")  # cash 7 for player 0, who is not asked again in this round
        s.apply("rest()")
        with pytest.raises(rulelang.RulesRuntimeError) as e:
            s.apply("rest()")  # player 0's turn comes: its listing faults, the apply undone
        faults.append(str(e.value))
        out[backend] = legal, faults, s.digest()
    assert out["interpreter"] == out["compiled"]
    assert "division by zero" in out["interpreter"][1][0]
    assert "listed.rules:10:" in out["interpreter"][1][0]


SHARED = """
game Shared
players 2..2
state { n: int = 1  log: list<int> = [] }
flow {
  let w = 2
  while len(log) < 5 {
    choose players[0] {
      a(x: int in 0..2, y: int in 0..1) when any(z > x + y + n for z in [1, 2, w]) {
        push x + y to log
      }
      b(y: int in 0..3) when count(z > y for z in [w, n]) == 1 { push y + 10 to log }
      c(z: int in 1..2) when w > z + n { n += 1 }
    }
  }
}
score p => n
"""


def test_the_options_of_a_decision_list_from_one_copy_of_the_frame():
    """The options of one decision are listed from a single copy of the frame: parameters and
    comprehension variables spelled alike (a's y and b's y, the z of each) each have a slot
    of their own, so each listing reads only its own; the frame is left as it was and the
    candidates are the compiled engine's at every step."""
    games = [rulelang.load_text(SHARED, "shared.rules", backend=b).new_game(2)
             for b in ("interpreter", "compiled")]
    s, c = games
    for k in [0, 7, 3, 0, 5, 1]:
        s._actions_cache = None
        before = dict(s.frame)
        assert s.legal_actions() == c.legal_actions()
        assert s.frame == before
        if s.is_terminal():
            break
        k %= s.num_choices()
        s.apply_index(k)
        c.apply_index(k)
        assert s.digest() == c.digest()
    assert s.is_terminal() and c.is_terminal()


def _kept_options(game) -> dict:
    """{option name: the node types of its value keys} for the options game keeps per key."""
    from rulelang.lower import ChooseAt

    out = {}
    for ins in game.lowered.code:
        if isinstance(ins, ChooseAt):
            for o in ins.node.options:
                keys = game.value_keys(o)
                if keys is not None:
                    out.setdefault(o.name, []).append([type(k).__name__ for k in keys])
    return out


def test_the_options_kept_per_key_on_the_rules_files():
    """The options whose candidates the interpreter keeps per values of their keys
    (Game.value_keys): those the code generator keeps too (LISTED_ tables)."""
    found = {os.path.basename(f): _kept_options(rulelang.load(f, backend="interpreter"))
             for f in RULES_FILES}
    assert found == {
        "acquire.rules": {"dispose": [["Index", "Index"]]},
        "automobile.rules": {"place_dealers": [["Call"]]},
        "poder.rules": {"rebid": [["Name"]]},
        "polanaftowe.rules": {"lobby": [["Index"]], "bid": [["Name", "Index"]],
                              "deliver": [["Index", "Name"]], "declare": [["Index"], ["Index"]]},
        "powergrid.rules": {"bid": [["Attr", "Index"], ["Name", "Index"]]},
    }
    from rulelang.codegen import compile_program

    for f in RULES_FILES:  # as many as the generated module's kept listings
        src = compile_program(rulelang.check_file(f))
        assert src.count("\nLISTED_") == sum(map(len, found[os.path.basename(f)].values())), f


@pytest.mark.parametrize("faulty", [False, True])
def test_listings_kept_per_key_play_the_compiled_engines_games(verify, faulty):
    """tests/fixtures/listings.rules (stack's keys spent(p), a bound with tick % 7 and the
    number of players; paint's the `if faulty` part; flag's a set; bump's a test of an
    optional int and the int): the interpreter keeps those four, not take (chips[c] read at
    its parameter), and every hit is checked against a fresh listing (VERIFY_MEMO). Games of
    2, 3 and 4 players share the game's lists and match the compiled engine's step by step,
    with paint's listing faulting alike when its key tick % 5 reaches fee's missing row."""
    from tests.differential.lockstep import snapshot

    path = os.path.join(ROOT, "tests", "fixtures", "listings.rules")
    params = {"faulty": faulty}
    interp = rulelang.load(path, params=params, backend="interpreter")
    comp = rulelang.load(path, params=params, backend="compiled")
    assert _kept_options(interp) == {"stack": [["Call", "BinOp", "Name"]], "paint": [["CondExpr"]],
                                     "flag": [["Name", "BinOp"]], "bump": [["BinOp", "Name"]]}
    faults = set()
    for seed in range(6):
        for players in (2, 3, 4):
            a, b, rng = interp.new_game(players), comp.new_game(players), random.Random(seed)
            while not a.is_terminal():
                assert snapshot(a) == snapshot(b)
                k = rng.randrange(a.num_choices())
                errs = []
                for s in (a, b):
                    try:
                        s.apply_index(k)
                        errs.append(None)
                    except rulelang.RulesRuntimeError as err:
                        errs.append(str(err))
                assert errs[0] == errs[1]
                if errs[0] is not None:
                    faults.add(errs[0].split(":")[0] + ":" + errs[0].split(":")[1])
                    break
    kept = {o.name: table for o, table in interp.listed.items()}
    if faulty:  # fee(10) found while listing paint: tick % 5 == 3 is never kept
        assert {f.rsplit("/", 1)[-1] for f in faults} == {"listings.rules:42"}
        assert len(kept["paint"]) == 4 and not any(k == (3,) for k in kept["paint"])
    else:
        assert not faults
        assert len(kept["stack"]) == engine.LISTING_MEMO  # more values came than it keeps
        assert len(kept["paint"]) == 1  # its one key is 0 throughout
