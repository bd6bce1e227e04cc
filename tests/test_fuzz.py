"""Bad and hostile input: the front end answers RulesError or a program, never another exception.

Random token soup and mutated copies of the real rules files go through rulelang.check_text;
mutants that still check are loaded and played a few steps on both back ends in lock step,
where only rules-level errors may come out, the same on both, and a hang is a failure.
Hostile inputs (deep nesting, huge files, NUL bytes, bad UTF-8, dunder names,
look-alike letters, escapes in strings, code-injection attempts) have targeted tests.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import random
import re
import signal
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import rulelang
from rulelang import CHANCE, TERMINAL, IllegalAction, RulesError, RulesRuntimeError
from rulelang.check import AGG_FUNCS, BUILTINS
from rulelang.grammar import parse

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "rules"
RULES_FILES = sorted(RULES_DIR.glob("*.rules"))
GRAMMAR = (ROOT / "rulelang" / "grammar" / "rules.lark").read_text(encoding="utf-8")
_LITERALS = set(re.findall(r'"([^"\s]+)"', GRAMMAR))
KEYWORDS = sorted(w for w in _LITERALS if re.fullmatch(r"[a-z_]+", w))
PUNCT = sorted(w for w in _LITERALS if len(w) <= 2 and not re.search(r"[\w\s\"\\]", w))
NAMES = ["x", "p", "cash", "Chain", "Tile", "players", "num_players", "len", "max", "first",
         "__import__", "__class__", "eval", "exec", "os", "self", "_", "A", "int", "bool"]

FAST = settings(max_examples=75, deadline=None, suppress_health_check=list(HealthCheck))
FUZZ_SLOW = settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))

# Minimal program used to place random statements where the checker (not only the parser) sees
# them.
SHELL = """\
game Shell
players 2..3
enum Color(v: int) { Red(1), Green(2) }
grid Cell cols 1..3 rows A..B
table t(n: int) -> int { 0..2 => 1, _ => 0 }
state {
  cash: int[player] = 0
  tiles: set<Cell> = {}
  log: list<int> = []
}
def f(c: Color) -> int = c.v
flow {
  let p: player = players[0]
%s
}
score p => cash[p]
"""


# -- oracles ---------------------------------------------------------------------------------

@pytest.fixture(autouse=True, scope="module")
def _engines_in_memory():
    # Every mutant is a new engine: compile in memory rather than fill the user's cache.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RULELANG_CACHE_MAX_BYTES", "0")
        yield


def check_only(text: str, include_dir=None):
    """check_text must either return a program or raise RulesError with diagnostics.
    `include_dir`: where `include` paths resolve (rules/ for the project's rules files)."""
    try:
        return rulelang.check_text(text, "fuzz.rules", include_dir=include_dir)
    except RulesError as exc:
        assert exc.diagnostics, "RulesError without diagnostics"
        rendered = str(exc)  # rendering must not fail either
        assert "error[E" in rendered
        return None


class Hang(AssertionError):
    """Loading or playing a few steps took longer than HANG_SECONDS: a failure."""


# Generous: compiling a mutant of a large rules file takes a second or two on a loaded machine;
# a hang is what runs far past that.
HANG_SECONDS = 30.0


@contextlib.contextmanager
def time_limit(seconds: float):
    """Turn a hang (e.g. `while true { }`, which is valid) into a failure instead of waiting."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise Hang(f"no result after {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_time_limit_turns_a_hang_into_a_failure() -> None:
    with pytest.raises(Hang, match="no result after 0.2 s"), time_limit(0.2):
        while True:
            pass


def _outcome(fn, *args):
    """(result, error) where error is what both back ends must agree on: class, message and
    location of a rules-level error. Any other exception propagates (a finding)."""
    try:
        return fn(*args), None
    except RulesError as exc:
        return None, ("RulesError", tuple((d.code, d.message, str(d.span))
                                          for d in exc.diagnostics))
    except RulesRuntimeError as exc:
        return None, ("RulesRuntimeError", exc.message, exc.location)
    except IllegalAction:
        return None, ("IllegalAction",)


def load_and_play(text: str, seed: int, steps: int = 25, include_dir=None) -> None:
    """Load a checked text on both back ends and play the same random legal moves in lock step.

    Only rules-level errors may come out, the same on both back ends; states, legal actions and
    observations must agree at every step; and nothing may hang (Hang, after HANG_SECONDS)."""
    rng = random.Random(seed)
    with time_limit(HANG_SECONDS):
        (ga, ea), (gb, eb) = (_outcome(functools.partial(rulelang.load_text,
                                                         include_dir=include_dir),
                                       text, "fuzz.rules", None, None, b)
                              for b in ("interpreter", "compiled"))
        assert ea == eb, f"load: interpreter {ea}, compiled {eb}"
        if ga is None:
            return
        for g in (ga, gb):
            with pytest.raises(ValueError, match="players"):
                g.new_game(num_players=g.max_players + 1)
        n = max(ga.min_players, min(2, ga.max_players))
        (a, ea), (b, eb) = _outcome(ga.new_game, n), _outcome(gb.new_game, n)
        assert ea == eb, f"new_game: interpreter {ea}, compiled {eb}"
        if a is None:
            return
        for step in range(steps):
            assert a.to_json() == b.to_json(), f"step {step}: states differ"
            assert a.digest() == b.digest()
            if a.current_player == TERMINAL:
                assert (a.scores(), a.winners()) == (b.scores(), b.winners())
                break
            if a.current_player == CHANCE:
                outcomes = [x for x, _p in a.chance_outcomes()]
                assert outcomes == [x for x, _p in b.chance_outcomes()]
                action = outcomes[rng.randrange(len(outcomes))]
            else:
                legal = a.legal_actions()
                assert legal == b.legal_actions(), f"step {step}: legal actions differ"
                p = a.current_player
                assert a.observation(p) == b.observation(p)
                action = legal[rng.randrange(len(legal))]
            (_r, ea), (_r, eb) = _outcome(a.apply, action), _outcome(b.apply, action)
            assert ea == eb, f"step {step} {action}: interpreter {ea}, compiled {eb}"
            if ea is not None:
                assert a.to_json() == b.to_json(), "states differ after the same fault"
                break


# -- (a) random text -------------------------------------------------------------------------

_soup_token = st.one_of(
    st.sampled_from(KEYWORDS), st.sampled_from(PUNCT), st.sampled_from(NAMES),
    st.integers(-5, 10**6).map(str),
    st.text(st.characters(codec="utf-8", exclude_characters='"\n\\'), max_size=6)
    .map(lambda s: f'"{s}"'),
    st.sampled_from([" ", "\n", "\t", "#", "\x00", "\u00a0", "\u0441", "\\", '"', "@end",
                     "@", "\r\n", "\ufeff"]),
)
_soup = st.lists(st.tuples(_soup_token, st.sampled_from([" ", "", "\n"])), max_size=60).map(
    lambda parts: "".join(tok + sep for tok, sep in parts))
random_text = st.one_of(
    st.text(max_size=200),
    _soup,
    _soup.map(lambda s: "game G\nplayers 2..4\n" + s),
    _soup.map(lambda s: SHELL % s),
)


def _random_text_property(text: str) -> None:
    program = check_only(text)
    if program is not None:
        load_and_play(text, seed=len(text))


@FAST
@given(random_text)
@example("")
@example("game")
@example(SHELL % "")
@example(SHELL % "  cash[p] += f(Red) + t(len(log))")
def test_random_text_gives_rules_error_or_program(text: str) -> None:
    _random_text_property(text)


@pytest.mark.slow
@FUZZ_SLOW
@given(random_text)
def test_random_text_slow(text: str) -> None:
    _random_text_property(text)


# -- (b) mutated real rules files ------------------------------------------------------------

TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|#[^\n]*|[A-Za-z_][A-Za-z0-9_]*|[0-9]+|\.\.|=>|->|==|!='
                   r'|<=|>=|\+=|-=|//|\s+|.', re.S)
OPS = ("delete", "duplicate", "swap", "rename", "insert_keyword", "insert_punct", "number",
       "truncate", "delete_line", "duplicate_line", "swap_lines", "splice_line")
_SOURCES = {p.name: p.read_text(encoding="utf-8") for p in RULES_FILES}
_ALL_LINES = [ln for text in _SOURCES.values() for ln in text.splitlines() if ln.strip()]


def mutate(text: str, ops: list[tuple[str, int, int]]) -> str:
    for op, a, b in ops:
        if op.endswith("line") or op.endswith("lines"):
            lines = text.split("\n")
            i, j = a % len(lines), b % len(lines)
            if op == "delete_line":
                del lines[i]
            elif op == "duplicate_line":
                lines.insert(i, lines[i])
            elif op == "swap_lines":
                lines[i], lines[j] = lines[j], lines[i]
            else:  # a line from any rules file, e.g. a statement out of its context
                lines.insert(i, _ALL_LINES[b % len(_ALL_LINES)])
            text = "\n".join(lines)
            continue
        toks = TOKEN.findall(text)
        solid = [k for k, t in enumerate(toks) if not t.isspace() and not t.startswith("#")]
        if not solid:
            continue
        i, j = solid[a % len(solid)], solid[b % len(solid)]
        if op == "delete":
            toks[i] = ""
        elif op == "duplicate":
            toks[i] = toks[i] + " " + toks[i]
        elif op == "swap":
            toks[i], toks[j] = toks[j], toks[i]
        elif op == "rename":
            names = sorted({t for t in toks if re.fullmatch(r"[A-Za-z_]\w*", t)})
            if re.fullmatch(r"[A-Za-z_]\w*", toks[i]):
                toks[i] = names[b % len(names)]
        elif op == "insert_keyword":
            toks[i] = f"{KEYWORDS[b % len(KEYWORDS)]} {toks[i]}"
        elif op == "insert_punct":
            toks[i] = f"{PUNCT[b % len(PUNCT)]}{toks[i]}"
        elif op == "number":
            if toks[i].isdigit():
                toks[i] = str([0, 1, 2, 7, 64, 65, 10**6, 10**30][b % 8])
        elif op == "truncate":
            toks = toks[:i]
        text = "".join(toks)
    return text


mutations = st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 10**6),
                               st.integers(0, 10**6)), min_size=1, max_size=4)


def _mutant_property(name: str, ops, seed: int) -> None:
    text = mutate(_SOURCES[name], ops)
    try:
        program = check_only(text, RULES_DIR)
        if program is not None:
            load_and_play(text, seed, include_dir=RULES_DIR)
    except Exception as exc:
        raise AssertionError(f"mutations {ops} of {name} crashed the front end or engine "
                             f"({type(exc).__name__}: {exc})") from exc


@pytest.mark.skipif(not RULES_FILES, reason="no rules files")
@FAST
@given(st.sampled_from(sorted(_SOURCES) or ["-"]), mutations, st.integers(0, 2**32))
def test_mutated_rules_files(name: str, ops, seed: int) -> None:
    _mutant_property(name, ops, seed)


@pytest.mark.slow
@pytest.mark.skipif(not RULES_FILES, reason="no rules files")
@FUZZ_SLOW
@given(st.sampled_from(sorted(_SOURCES) or ["-"]), mutations, st.integers(0, 2**32))
def test_mutated_rules_files_slow(name: str, ops, seed: int) -> None:
    _mutant_property(name, ops, seed)


def test_shell_is_valid() -> None:
    text = SHELL % "  cash[p] += f(Red) + t(len(log))\n  for c in Cell {\n    add c to tiles\n  }"
    assert rulelang.load_text(text).new_game(2).scores() == [2, 0]


def test_unmutated_rules_files_check() -> None:
    for name, text in _SOURCES.items():
        assert check_only(text, RULES_DIR) is not None, name


def test_mutate_is_deterministic_and_changes_text() -> None:
    name = sorted(_SOURCES)[0]
    ops = [("rename", 40, 7), ("delete_line", 12, 0)]
    assert mutate(_SOURCES[name], ops) == mutate(_SOURCES[name], ops) != _SOURCES[name]


# -- systematic sweeps: every builtin, operator and statement over values of every type ------

# Values of many types in SHELL's flow (after SWEEP_PRELUDE): int, bool, player, enum, set of
# enum, set/list, none, array, list of players, optional cell, empty literals, a def name.
POOL = ["1", "true", "p", "Red", "Color", "tiles", "log", "none", "cash", "players", "cell",
        "[]", "{}", "f", "f(Red)", "1..3", "Cell"]
SWEEP_PRELUDE = "  let cell = first(c for c in Cell)\n"
PAIRS = list(itertools.product(["1", "true", "p", "Red", "tiles", "log", "none", "cash", "cell",
                                "Color"], repeat=2))


def _parses(stmt: str) -> bool:
    try:
        parse(f"flow {{\n{stmt}\n}}")
    except RulesError:
        return False
    return True


def _sweep(stmts: list[str]) -> None:
    # One syntax error would stop the whole file before the checker, so keep statements that
    # parse on their own; the checker then sees them all in one run.
    good = [st for st in stmts if _parses(st)]
    assert len(good) >= len(stmts) // 3, "sweep mostly syntax errors: fix the sweep"
    text = SHELL % (SWEEP_PRELUDE + "\n".join(good))
    try:
        rulelang.check_text(text, "sweep.rules")
    except RulesError as exc:
        assert "error[E" in str(exc)
        assert all(d.code != "E001" for d in exc.diagnostics), str(exc)
    else:
        load_and_play(text, seed=0, steps=5)


@pytest.mark.parametrize("func", sorted(set(BUILTINS) | set(AGG_FUNCS) | {"t", "f", "nope"}))
def test_call_sweep(func: str) -> None:
    calls = [f"{func}()"] + [f"{func}({a})" for a in POOL]
    calls += [f"{func}({a}, {b})" for a, b in PAIRS]
    calls += [f"{func}({a}, {a}, {a})" for a in POOL]
    calls += [f"{func}(x for x in {a})" for a in POOL]
    calls += [f"{func}({e} for x in {a} if {c})" for e in ("x", "1", "true", "none")
              for a in ("log", "players", "Color", "1") for c in ("true", "x", "1")]
    _sweep([f"  let v{k} = {c}" for k, c in enumerate(calls)])


@pytest.mark.parametrize("op", ["+", "-", "*", "//", "%", "==", "!=", "<", "<=", ">", ">=",
                                "and", "or", "in", "not in", "..", "step"])
def test_operator_sweep(op: str) -> None:
    if op == "step":
        exprs = [f"{a}..{b} step {b}" for a, b in PAIRS]
    else:
        exprs = [f"{a} {op} {b}" for a, b in PAIRS]
    _sweep([f"  let v{k} = {e}" for k, e in enumerate(exprs)])


def test_expression_form_sweep() -> None:
    exprs = [f"not {a}" for a in POOL] + [f"-{a}" for a in POOL]
    exprs += [f"if {a} then {b} else {a}" for a, b in itertools.product(POOL[:8], repeat=2)]
    exprs += [f"{a}[{b}]" for a, b in PAIRS]
    exprs += [f"{a}.{n}" for a in POOL for n in ("v", "col", "row", "Red", "x")]
    exprs += [f"[{a} for x in {b}]" for a, b in itertools.product(("x", "1"), POOL)]
    exprs += [f"{{{a} for x in {b}}}" for a, b in itertools.product(("x", "1"), POOL)]
    exprs += [f"sort(x in {b} by {a})" for a, b in itertools.product(("x", "1", "-x"), POOL)]
    _sweep([f"  let v{k} = {e}" for k, e in enumerate(exprs)])


@pytest.mark.parametrize("form", [
    "add {a} to {b}", "remove {a} from {b}", "push {a} to {b}", "{b} = {a}", "{b} += {a}",
    "{b}[{a}] = {a}", "{b}[{a}] -= 1", "for x in {a} {{ }}", "if {a} {{ }} elif {a} {{ }}",
    "while {a} {{ break }}", "choose {a} {{ o(x: Color in {b}) when {a} {{ }} }}",
    "choose {a} secret {{ o(n: int in {a}..{a} step {a}) {{ }} }}",
    "chance c(x: int in {a}) weight {a} seen by {b}", "chance c(x: Color in {a})",
    "run {b}({a})", "let y: int = {a}", "let y: {b} = {a}",
])
def test_statement_sweep(form: str) -> None:
    targets = ["cash", "tiles", "log", "p", "cell", "Red", "f", "x", "cash[p]", "Color"]
    stmts = [form.format(a=a, b=b) for a in POOL for b in targets]
    _sweep(["  " + st.replace("\n", " ") for st in stmts])


@pytest.mark.parametrize("typ", ["int", "bool", "player", "Color", "Cell", "set<int>",
                                 "set<Color>", "list<int>", "int[player]", "int[int]",
                                 "Color?", "int??", "set<list<int>>", "list<Color>[player]",
                                 "int[Color][player]", "Nope", "set<Nope>", "Color[Nope]"])
def test_type_sweep(typ: str) -> None:
    decls = "\n".join(f"  s{k}: {typ} = {a}" for k, a in enumerate(POOL) if a not in
                      ("p", "cell", "f"))
    text = SHELL.replace("  log: list<int> = []\n", f"  log: list<int> = []\n{decls}\n")
    text = text.replace("%s", "\n".join(f"  let w{k}: {typ} = {a}" for k, a in enumerate(POOL)))
    check_only(text)
    check_only(text.replace("state {", f"param q: {typ} = 1\nconst K: {typ} = 1\n"
                                       f"table tt(k: {typ}) -> {typ} {{ 1 => 1, _ => Red }}\n"
                                       "state {"))


# -- hostile input ---------------------------------------------------------------------------

def _diag(text: str):
    with pytest.raises(RulesError) as info:
        rulelang.check_text(text, "hostile.rules")
    return info.value.diagnostics


@pytest.mark.parametrize("make", [
    lambda n: SHELL % ("  cash[p] += " + "(" * n + "1" + ")" * n),
    lambda n: SHELL % ("  cash[p] += " + "-" * n + "1"),
    lambda n: SHELL % ("  if " + "not " * n + "true { }"),
    lambda n: SHELL % ("  log = " + "[" * n + "]" * n),
    lambda n: SHELL % ("  cash[p] += " + "1 + " * n + "1"),
    lambda n: SHELL % ("  cash[p] += " + "if true then 1 else " * n + "1"),
    lambda n: SHELL % ("  cash[p] += " + "(1 + " * n + "1" + ")" * n),
    lambda n: SHELL % ("  if true {\n" * n + "  }\n" * n),
    lambda n: SHELL % ("  while true {\n" * n + "  break }\n" * n),
    lambda n: SHELL % ("  cash[p] += log" + "[0]" * n),
    lambda n: SHELL % ("  let y: int" + "?" * n + " = 1"),
    lambda n: SHELL % "" + "\nconst K: " + "set<" * n + "int" + ">" * n + " = {}",
    lambda n: "{" * n + "}" * n,
    lambda n: "(" * n,
], ids=["parens", "neg", "not", "lists", "sum", "cond", "paren_sum", "if", "while", "index",
        "opt", "set_type", "braces", "open_parens"])
@pytest.mark.parametrize("n", [5000])
def test_deep_nesting(make, n: int) -> None:
    text = make(n)
    program = check_only(text)
    if program is not None:  # 5000 plain parentheses are just grouping
        load_and_play(text, seed=0, steps=5)


def test_nesting_limit_is_reported_at_the_place() -> None:
    (d,) = _diag(SHELL % ("  if true {\n" * 150 + "  }\n" * 150))
    assert d.code == "E001" and "nested more than" in d.message
    assert d.span.line > 14


def test_moderate_nesting_still_works() -> None:
    text = SHELL % ("  if true {\n" * 30 + "  cash[p] += " + "-(" * 20 + "1" + ")" * 20
                    + "\n" + "  }\n" * 30)
    game = rulelang.load_text(text)
    state = game.new_game(2)
    assert state.is_terminal() and state.scores() == [1, 0]


def test_one_megabyte_file() -> None:
    filler = "# " + "x" * 97 + "\n"
    big = SHELL % "  cash[p] += 1" + filler * 10_500
    assert len(big) > 1_000_000
    assert rulelang.load_text(big).new_game(2).scores() == [1, 0]
    junk = "".join(random.Random(1).choices("{}()[]=+-*<>.,:; \nabc123", k=1_000_000))
    check_only(junk)
    check_only("x" * 1_000_000)
    check_only("9" * 1_000_000)


def test_nul_bytes() -> None:
    (d,) = _diag(SHELL % "  cash[p] += 1\x00")
    assert d.code == "E001" and "'\\x00'" in d.message and d.span.line == 14
    assert _diag("\x00" * 100)[0].code == "E001"


@pytest.mark.parametrize("data", [
    b"game G\nplayers 2..4\n\xff\xfe\n",
    b"\xc3\x28 game",
    b"game G # caf\xe9\n",
    b"\xed\xa0\x80",  # an encoded surrogate
])
def test_invalid_utf8_file(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "bad.rules"
    path.write_bytes(data)
    for call in (rulelang.load, rulelang.check_file):
        with pytest.raises(RulesError) as info:
            call(path)
        (d,) = info.value.diagnostics
        assert d.code == "E000" and "cannot read file" in d.message
        assert str(info.value).startswith(str(path))


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(RulesError) as info:
        rulelang.load(tmp_path)
    assert info.value.diagnostics[0].code == "E000"


@pytest.mark.parametrize("name", ["__import__", "__class__", "__builtins__", "__dict__",
                                  "__init__", "self", "eval", "exec", "globals", "os",
                                  "True", "None", "lambda", "import", "class", "def_",
                                  "_", "__"])
def test_python_looking_names_are_plain_names(name: str) -> None:
    # As an undefined name: an ordinary diagnostic.
    diags = _diag(SHELL % f"  cash[p] += {name}")
    assert [d.code for d in diags] in (["E010"], ["E001"])
    # As a local (where the grammar allows it): accepted, and runs like any other name.
    text = SHELL % f"  let {name}: int = 3\n  cash[p] += {name}"
    program = check_only(text)
    if program is not None:
        assert rulelang.load_text(text).new_game(2).scores() == [3, 0]


def test_no_code_execution(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payloads = [
        f'__import__("os").system("touch {marker}")',
        f'  cash[p] += __import__("os").system("touch {marker}")',
        f'  fail "{{__import__(\'os\').system(\'touch {marker}\')}}"',
        f'  fail "\\"); __import__(\\"os\\").system(\\"touch {marker}\\"); (\\""',
        f"  fail \"''' + __import__('os').system('touch {marker}') + '''\"",
        f"  let x = eval(\"__import__('os').system('touch {marker}')\")",
        f"  # {marker}\n  cash[p] += len([c for c in Color if exec(\"open('{marker}','w')\")])",
    ]
    for body in payloads:
        for text in (body, SHELL % body, SHELL.replace("game Shell", f"game {body}")):
            program = check_only(text)
            if program is not None:
                load_and_play(text, seed=0)
    assert not marker.exists()


@pytest.mark.parametrize("text", [
    "game G\nplayers 2..4\nstate { с: int = 0 }",           # Cyrillic es
    "game G\nplayers 2..4\nstate { ο: int = 0 }",           # Greek omicron
    "game Ｇ",                                               # fullwidth G
    "game G\u200b\nplayers 2..4",                            # zero-width space
    "game G\u00a0\nplayers 2..4",                            # no-break space
    "game \u202eG",                                          # right-to-left override
    "game G\nplayers 2\u20264",                              # horizontal ellipsis
    "game G\nplayers 2..4\nconst K: int = \u0661",           # Arabic-Indic digit one
])
def test_unicode_look_alikes_are_clean_syntax_errors(text: str) -> None:
    (d,) = _diag(text)
    assert d.code == "E001" and "ASCII only" in d.message and "U+" in d.message


@pytest.mark.parametrize("literal,expected", [
    (r'"plain"', "plain"),
    (r'"quote \" inside"', 'quote " inside'),
    (r'"back\\slash"', "back\\slash"),
    (r'"new\nline and\ttab"', "new\nline and\ttab"),
    (r'"{0} %s {__class__} $(rm -rf)"', "{0} %s {__class__} $(rm -rf)"),
    (r'"ends with backslash \\"', "ends with backslash \\"),
    ('"unicode é ✓"', "unicode é ✓"),
    (r'"unknown escape \q"', "unknown escape q"),
])
def test_fail_strings_are_carried_verbatim(literal: str, expected: str) -> None:
    game = rulelang.load_text(SHELL % f"  fail {literal}", "strings.rules")
    with pytest.raises(RulesRuntimeError) as info:
        game.new_game(2)
    assert info.value.message == expected
    assert info.value.location == "strings.rules:14:3"


@pytest.mark.parametrize("literal", ['"open', '"a\nb"', '"escaped end \\"', "'single'"])
def test_broken_fail_strings_are_syntax_errors(literal: str) -> None:
    (d,) = _diag(SHELL % f"  fail {literal}")
    assert d.code == "E001" and d.span.line == 14


def test_huge_integers() -> None:
    (d,) = _diag(SHELL % ("  cash[p] += " + "9" * 5000))
    assert d.code == "E001" and d.message == "integer literal too long"
    text = SHELL % ("  cash[p] += " + "9" * 4000)
    assert check_only(text) is not None
