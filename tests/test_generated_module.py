"""Generated modules a reviewer would accept: no unused definitions, names from the rules file
that adding a `let` does not change, a line map for every `# rules:` site, and a golden module
whose diff shows every change to the generator (refresh: RULELANG_UPDATE_GOLDEN=1 pytest ...)."""

from __future__ import annotations

import ast
import glob
import os
import re
from pathlib import Path

import pytest

import rulelang
from rulelang.codegen import compile_program
from tests.conftest import ROOT, RULES

GOLDEN = Path(ROOT) / "tests" / "golden" / "switches_engine.py"
SWITCHES = "tests/fixtures/switches.rules"
PUBLIC = {"COMPILER_VERSION", "new_game"}  # the module's API, read from outside


def _modules():
    for path in sorted(glob.glob(os.path.join(RULES, "*.rules"))):
        rel = os.path.relpath(path, ROOT)
        for variant in [None, *rulelang.check_file(path).variants]:
            yield pytest.param(rel, variant, id=f"{os.path.basename(rel)}-{variant or 'base'}")


def _compile(rel: str, variant=None, text: str | None = None) -> str:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        if text is not None:
            return compile_program(rulelang.check_text(text, rel, variant))
        return compile_program(rulelang.check_file(rel, variant=variant))
    finally:
        os.chdir(cwd)


def _top_level(tree: ast.Module) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node
    return out


@pytest.mark.parametrize(("rel", "variant"), list(_modules()))
def test_every_definition_is_used(rel, variant):
    tree = ast.parse(_compile(rel, variant))
    defined = _top_level(tree)
    used: set[str] = set()
    for node in tree.body:
        own = {name for name, d in defined.items() if d is node}
        used |= {x.id for x in ast.walk(node) if isinstance(x, ast.Name)} - own
    assert sorted(set(defined) - used - PUBLIC) == []


@pytest.mark.parametrize(("rel", "variant"), list(_modules()))
def test_line_map_covers_every_rules_site(rel, variant):
    src = _compile(rel, variant)
    namespace: dict = {}
    exec(compile(src, rel, "exec"), namespace)  # our own generated module
    line_map = namespace["_LINEMAP"]
    sites = 0
    for n, line in enumerate(src.split("\n"), start=1):
        m = re.search(r"# rules:(\d+)\b", line)
        if m and not line.lstrip().startswith('"""'):
            sites += 1
            assert line_map.get(n) == int(m.group(1)), (n, line)
    assert sites > 20
    # every line of a def's body maps into the def
    program = rulelang.check_file(os.path.join(ROOT, rel), variant=variant)
    # (a def's span is its name; its body's span runs to the closing brace)
    spans = {f"def_{d.name}": (d.span.line, max(d.span.end_line, d.body.span.end_line))
             for d in program.defs.values()}
    for node in ast.parse(src).body:
        if isinstance(node, ast.FunctionDef) and node.name in spans:
            first, last = spans[node.name]
            for n in range(node.lineno, node.end_lineno + 1):
                assert first <= line_map.get(n, 0) <= last, (node.name, n)


def test_a_fault_inside_a_def_body_reports_the_def_line(tmp_path):
    text = """
game DefFault
players 2..2
state { n: int = 0 }
def ratio(a: int, b: int) -> int {
  let q = a // b
  return q
}
flow {
  choose players[0] {
    go(k: int in 0..1) { n = ratio(10, k) + ratio(1, k) + ratio(2, k) + ratio(3, k) }
  }
}
score p => n
"""
    for backend in ("interpreter", "compiled"):
        s = rulelang.load_text(text, "deffault.rules", backend=backend).new_game(2)
        with pytest.raises(rulelang.RulesRuntimeError) as err:
            s.apply("go(0)")
        assert err.value.location == "deffault.rules:6:11"


def test_adding_a_let_renames_nothing():
    source = Path(ROOT, SWITCHES).read_text(encoding="utf-8")
    before = _top_level(ast.parse(_compile(SWITCHES)))
    edited = source.replace("flow {\n", "flow {\n  let extra = 1\n  bank += extra\n", 1)
    assert edited != source
    after = _top_level(ast.parse(_compile(SWITCHES, text=edited)))
    # Location constants are named after their .rules line and column (AT_<line>_<col>): those
    # below the two new lines move down by two, as their values do; every other name stays.
    flow_line = source[:source.index("flow {\n")].count("\n") + 1

    def moved(name: str) -> str:
        if not name.startswith("AT_"):
            return name
        _at, line, col = name.split("_")
        return f"AT_{int(line) + 2 if int(line) > flow_line else line}_{col}"
    assert any(n.startswith("AT_") and int(n.split("_")[1]) > flow_line for n in before)
    assert {moved(n) for n in before} <= set(after)
    attrs = re.compile(r"\bs\.(l_\w+|it_\w+|ix_\w+)")
    assert set(attrs.findall(_compile(SWITCHES))) < set(attrs.findall(_compile(SWITCHES,
                                                                                 text=edited)))


def test_golden_module():
    """The generated module for tests/fixtures/switches.rules, line for line."""
    text = _compile(SWITCHES)
    if os.environ.get("RULELANG_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert GOLDEN.exists(), "no golden module: run with RULELANG_UPDATE_GOLDEN=1"
    assert text == GOLDEN.read_text(encoding="utf-8"), (
        "the generated module changed: review `git diff tests/golden` after refreshing with "
        "RULELANG_UPDATE_GOLDEN=1")


def test_bits_lists_members_in_order_and_never_misses_a_small_mask():
    """runtime.bits: the members of any mask in ascending order; the masks below 256 (sets of
    players, of small enums) are in the cache from the start and again after it is cleared,
    so walking one never costs a call of __missing__ (a Python frame)."""
    import random

    from rulelang import runtime

    missed = []

    class Counting(runtime.BitsCache):
        __slots__ = ()

        def __missing__(self, m):
            missed.append(m)
            return super().__missing__(m)

    cache = Counting()
    rng = random.Random(5)
    sparse = [sum(1 << rng.randrange(200) for _ in range(rng.randint(1, 10)))
              for _ in range(2500)]
    dense = [rng.getrandbits(200) for _ in range(50)]
    for m in list(range(256)) + sparse + dense + list(range(256)):
        assert cache[m] == tuple(i for i in range(m.bit_length()) if m >> i & 1)
    assert len(cache) < 256 + len(set(sparse))  # the cache was cleared on the way
    assert missed and min(missed) >= 256


# ---- temporaries sharing names (codegen/temps.py) ------------------------------------------------

SHARED = '''\
def f(s):
    _t1 = s.a
    s.b = _t1 + 1
    _t2 = s.c  # é
    s.d = _t2
    _t5 = 0
    for x in s.xs:
        _t3 = x * 2
        _t5 += _t3
    _t4 = _t5
    return _t4
'''


def test_temporaries_whose_lives_do_not_meet_share_a_name():
    from rulelang.codegen.temps import share_temporaries

    out = share_temporaries(SHARED)
    assert out.splitlines() == [
        "def f(s):",
        "    _t1 = s.a",
        "    s.b = _t1 + 1",
        "    _t1 = s.c  # é",
        "    s.d = _t1",
        # _t5 is read in the loop, _t3 written there: neither shares with the other
        "    _t1 = 0",
        "    for x in s.xs:",
        "        _t2 = x * 2",
        "        _t1 += _t2",
        "    _t2 = _t1",
        "    return _t2",
    ]
    ns: dict = {}
    exec(out, ns)
    obj = type("S", (), {"a": 1, "c": 2, "xs": [1, 2, 3]})()
    assert ns["f"](obj) == 12 and obj.b == 2 and obj.d == 2
    # names after non-ASCII text on their line (the parser's offsets count UTF-8 bytes)
    line = "    _t9 = 'ção'; s.c = 'é' + _t9 + 'ü' + _t9\n"
    assert share_temporaries("def g(s):\n    _t4 = s.a\n    s.b = _t4\n" + line) == (
        "def g(s):\n    _t1 = s.a\n    s.b = _t1\n    _t1 = 'ção'; s.c = 'é' + _t1 + 'ü' + _t1\n")


def test_a_value_carried_to_the_next_round_of_a_loop_keeps_its_name():
    """_t1 is written late in the loop and read early in the next round: its life is the whole
    loop, so _t2, written and read between, may not take its name."""
    from rulelang.codegen.temps import share_temporaries

    src = ("def g(xs):\n    out = []\n    for x in xs:\n        if x > 9:\n"
           "            out.append(_t1)\n        _t2 = x + 1\n        out.append(_t2)\n"
           "        _t1 = x\n    return out\n")
    out = share_temporaries(src)
    assert "_t1 = x" in out and "_t2 = x + 1" in out
    ns: dict = {}
    exec(out, ns)
    assert ns["g"]([1, 10]) == [2, 1, 11]


def test_a_function_with_a_nested_scope_or_a_temporary_parameter_is_left_alone():
    from rulelang.codegen.temps import share_temporaries

    for src in ("def h(s):\n    _t7 = 1\n    _t8 = [_t7 for _ in s]\n    return _t8\n",
                "def k(_t3):\n    _t9 = _t3\n    _t4 = 2\n    return _t4\n"):
        assert share_temporaries(src) == src


def test_generated_functions_keep_few_locals():
    """Acquire's buy loop test has the turn's end and the final payout copied in: 113 locals
    before its temporaries shared names, 52 after."""
    ns: dict = {}
    exec(compile(_compile("rules/acquire.rules"), "acquire_engine", "exec"), ns)
    assert ns["step_turn_while_2"].__code__.co_nlocals == 52


def test_long_lines_break_inside_a_subscript_only_where_nothing_else_fits():
    """layout.wrap_line: a break just inside a subscript (`a[` then the index on the next line)
    is taken only where no comma, operator or other bracket fits; the tokens never change."""
    from rulelang.codegen.layout import wrap_line

    chain = ("        _t6 = (_v_size[0] >= 41 or _v_size[1] >= 41 or _v_size[2] >= 41 or "
             "_v_size[3] >= 41 or _v_size[4] >= 41 or _v_size[5] >= 41)")
    assert wrap_line(chain) == [
        "        _t6 = (_v_size[0] >= 41 or _v_size[1] >= 41 or _v_size[2] >= 41 or "
        "_v_size[3] >= 41 or",
        "                _v_size[4] >= 41 or _v_size[5] >= 41)"]
    only = ("        s.v_shares[s.l_place_tile__p][_l_place_tile__c] = _t1 = "
            "s.v_shares[s.l_place_tile__p][_l_place_tile__c] + 1  # rules:218")
    pieces = wrap_line(only)
    assert pieces[0].endswith("= s.v_shares[  # rules:218") and len(pieces) == 2
    for line, out in ((chain, wrap_line(chain)), (only, pieces)):
        assert all(len(x) <= 100 for x in out)
        code = "".join(x.split("  # rules:")[0] for x in out)
        assert "".join(line.split("  # rules:")[0].split()) == "".join(code.split())
