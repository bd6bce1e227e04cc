"""The grammar builds conflict-free in strict mode, its shipped tables are current, and a fresh
machine (empty temp folder, home and cache) parses without writing anything; syntax errors list
what was expected and note the common slips."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import lark
import pytest

from rulelang.errors import RulesError
from rulelang.grammar import transform

ROOT = Path(__file__).resolve().parent.parent


def test_grammar_builds_in_strict_mode():
    # strict mode refuses shift/reduce conflicts and terminals that can collide
    parser = transform.build_parser(strict=True)
    assert parser.options.parser == "lalr"


def test_shipped_tables_match_the_grammar(tmp_path):
    data = resources.files("rulelang.grammar").joinpath("rules.tables").read_bytes()
    head = data.split(b"\n", 1)[0].decode()
    grammar, _, version = head.partition(" lark ")
    assert head == transform.tables_header(transform.grammar_text(), version), (
        "rulelang/grammar/rules.tables is stale: run `python -m rulelang.grammar`")
    # Built by the installed Lark (otherwise the parser is built in memory, and a rebuild
    # here would only show that Lark's layout): the shipped bytes are exactly a fresh build's.
    if version == lark.__version__:
        assert Path(transform.write_tables(str(tmp_path / "t"))).read_bytes() == data
        lark.Lark.load(io.BytesIO(data.split(b"\n", 1)[1]))  # loads (no silent rebuild)


@pytest.mark.parametrize("no_limit", [2**32 - 1, 2**64])
def test_tables_are_the_same_bytes_on_every_python(tmp_path, monkeypatch, no_limit):
    """An unbounded regular expression's maximum width is Python's "no limit", 2**32 - 1 before
    3.11.7 and 2**64 since (Debian 12's python3 is 3.11.2): the shipped tables hold one value for
    it, so a rebuild on either gives the shipped bytes. Both are simulated here."""
    real = lark.lexer.get_regexp_width

    def width(expr):
        lo, hi = real(expr)
        return [lo, no_limit if hi >= 2**32 - 1 else hi]

    monkeypatch.setattr(lark.lexer, "get_regexp_width", width)
    data = resources.files("rulelang.grammar").joinpath("rules.tables").read_bytes()
    if data.split(b"\n", 1)[0].decode().partition(" lark ")[2] != lark.__version__:
        pytest.skip("the shipped tables were built by another Lark")
    assert Path(transform.write_tables(str(tmp_path / "t"))).read_bytes() == data


def test_tables_are_the_same_bytes_whatever_the_hash_seed(tmp_path):
    """Lark numbers states and terminals in an order that varies between runs; write_tables
    numbers them canonically, so a rebuild changes the file only when the grammar changes."""
    outs = []
    for seed in ("1", "2"):
        target = tmp_path / f"tables{seed}"
        code = f"from rulelang.grammar.transform import write_tables; write_tables({str(target)!r})"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, timeout=120)
        outs.append(target.read_bytes())
    assert outs[0] == outs[1]


def test_fresh_machine_loads_without_writing_temp_files(tmp_path):
    env = dict(os.environ)
    for name in ("TMPDIR", "HOME", "XDG_CACHE_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        env[name] = str(folder)
    code = ("import rulelang; g = rulelang.load('rules/acquire.rules', backend='interpreter');"
            "s = g.new_game(4); print(s.current_player, s.num_choices())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["-1", "108"]
    assert list((tmp_path / "tmpdir").iterdir()) == []


# ---------------------------------------------------------------------------- syntax errors

GAME = """\
game G
players 2..3
param turns: int = 3
state { x: int[player] = 0 }
phase deal() {
  x[players[0]] += 1
}
phase give(p: player, n: int) {
  x[p] += n
}
flow {
  run deal()
}
score p => x[p]
"""


def _syntax_error(text: str):
    with pytest.raises(RulesError) as info:
        transform.parse(text, "g.rules")
    (d,) = info.value.diagnostics
    return d


TOP_LEVEL = ("'const', 'def', 'enum', 'flow', 'game', 'graph', 'grid', 'heuristic', 'include', "
             "'metric', 'param', 'phase', 'players', 'score', 'standing', 'state' or 5 more")


@pytest.mark.parametrize(("old", "new", "line", "word", "meant"), [
    ("flow {", "flw {", 11, "flw", "flow"),
    ("state {", "stat {", 4, "stat", "state"),
    ("param turns", "parm turns", 3, "parm", "param"),
])
def test_a_misspelt_top_level_keyword_gets_a_did_you_mean(old, new, line, word, meant):
    # The misspelt word is itself the unexpected token (in a body it reads as a name, and the
    # error falls on the word after it: tests/fixtures/errors/misspelt_keyword.rules).
    d = _syntax_error(GAME.replace(old, new))
    assert (d.code, d.span.line, d.span.col) == ("E001", line, 1)
    assert d.message == f"unexpected '{word}'; expected {TOP_LEVEL}"
    assert d.notes == (f"did you mean '{meant}'?",)


def test_a_top_level_name_far_from_every_keyword_gets_no_note():
    d = _syntax_error(GAME.replace("flow {", "banana {"))
    assert (d.span.line, d.span.col, d.notes) == (11, 1, ())


@pytest.mark.parametrize(("old", "new", "line", "col", "note"), [
    # in the flow, and in a phase body
    ("  run deal()", "  deal()", 12, 7, "'deal' is a phase: write 'run deal()'"),
    ("  x[p] += n", "  deal ()", 9, 8, "'deal' is a phase: write 'run deal()'"),
    # the arguments as written, when they are simple enough to copy
    ("  run deal()", "  give(players[1], turns)", 12, 7,
     "'give' is a phase: write 'run give(players[1], turns)'"),
    ("  run deal()", "  give(players[1],\n       max(1, turns))", 12, 7,
     "'give' is a phase: write 'run give(...)'"),
    # not a phase of the file
    ("  run deal()", "  dealt()", 12, 8,
     "a call on its own is not a statement; a phase is started with 'run name(args)'"),
    # a misspelt keyword before '(' is still named
    ("  run deal()", "  retrun(1)", 12, 9, "did you mean 'return'?"),
])
def test_a_phase_called_like_a_function_is_told_to_run_it(old, new, line, col, note):
    d = _syntax_error(GAME.replace(old, new))
    assert (d.code, d.span.line, d.span.col) == ("E001", line, col)
    assert d.message == "unexpected '('; expected '+=', '-=', '=' or '['"
    assert d.notes == (note,)


def test_a_phase_call_note_is_rendered_under_the_caret():
    text = GAME.replace("  run deal()", "  deal()")
    with pytest.raises(RulesError) as info:
        transform.parse(text, "g.rules")
    assert str(info.value) == (
        "g.rules:12:7: error[E001]: unexpected '('; expected '+=', '-=', '=' or '['\n"
        "   12 |   deal()\n"
        "              ^\n"
        "  note: 'deal' is a phase: write 'run deal()'")


@pytest.mark.parametrize(("old", "new", "line", "col", "message"), [
    # one: no 'or'
    ("players 2..3", "players 3", 3, 1, "unexpected 'param'; expected '..'"),
    # two: 'or' alone
    ("x: int[player] = 0", "x: int[player] = 0 secret", 4, 28,
     "unexpected 'secret'; expected '}' or a name ('secret' is a keyword and cannot be used "
     "as a name)"),
    # three or more: commas, then 'or' before the last
    ("  run deal()", "  x deal", 12, 5, "unexpected 'deal'; expected '+=', '-=' or '='"),
    ("x[p] += n", "x[p] += [n n]", 9, 14, "unexpected 'n'; expected ',', '=>', ']' or 'for'"),
    # past 16, the rest are counted
    ("players 2..3", "players 2..3 {", 2, 14, f"unexpected '{{'; expected {TOP_LEVEL}"),
])
def test_the_expected_tokens_are_joined_with_commas_and_a_last_or(old, new, line, col, message):
    d = _syntax_error(GAME.replace(old, new))
    assert (d.code, d.span.line, d.span.col) == ("E001", line, col)
    assert d.message == message


def test_an_operator_terminal_is_listed_symbol_by_symbol():
    # ('-' is also the terminal of unary minus: listed once)
    names = ["ADDOP", "MULOP", "AUGOP", "MINUS", "NAME"]
    assert transform._describe(transform._parser(), names) == [
        "'%'", "'*'", "'+'", "'+='", "'-'", "'-='", "'//'", "a name"]


def test_join_for_every_length():
    items = [f"'{c}'" for c in "abcdefghijklmnopqrs"]
    assert transform._join([]) == "something else"
    assert transform._join(items[:1]) == "'a'"
    assert transform._join(items[:2]) == "'a' or 'b'"
    assert transform._join(items[:3]) == "'a', 'b' or 'c'"
    assert transform._join(items[:16]) == ", ".join(items[:15]) + " or 'p'"
    assert transform._join(items[:17]) == ", ".join(items[:16]) + " or 1 more"
    assert transform._join(items) == ", ".join(items[:16]) + " or 3 more"
