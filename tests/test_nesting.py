"""Deeply nested rules (issue 7 item 8): 21 nested loops compiled to a module Python refuses
(`too many statically nested blocks`) while the interpreter ran the file. Now the checker caps
loop nesting at 16 for both back ends (E033, with file:line:col), and everything under the cap,
however deep its aggregates nest, compiles and runs the same on both back ends."""

from __future__ import annotations

import pytest

import rulelang
from rulelang.check import MAX_LOOP_NESTING
from rulelang.codegen import compile_program


def nest(depth: int, inner: str, ind: int = 1) -> str:
    """`depth` nested loops (for and while in turn) around `inner`."""
    lines = []
    for i in range(depth):
        pad = "  " * (ind + i)
        if i % 2 == 0:
            lines.append(f"{pad}for a{i} in 1..1 {{")
        else:
            lines.append(f"{pad}let w{i} = 0")
            lines.append(f"{pad}while w{i} < 1 {{")
            lines.append(f"{pad}  w{i} += 1")
    lines.append("  " * (ind + depth) + inner)
    for i in reversed(range(depth)):
        lines.append("  " * (ind + i) + "}")
    return "\n".join(lines)


# count -> 2, sum over y -> 4, ... : six aggregates deep, 2 ** 6 = 64
DEEP_AGG = ("sum(sum(sum(sum(sum(count(x > 0 for x in 1..2) for y in 1..2) for z in 1..2) "
            "for u in 1..2) for v in 1..2) for t in 1..2)")


def game_text(flow: str, extra: str = "") -> str:
    return ("game Deep\nplayers 2..2\nstate {\n  n: int = 0\n}\n" + extra
            + "flow {\n" + flow + "\n}\nscore p => n\n")


def test_21_nested_loops_are_refused_on_both_back_ends(backend):
    text = game_text(nest(21, "n += 1"))
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.load_text(text, "deep.rules", backend=backend)
    # the 17th loop (a `for`, the 17th line of the flow) is reported, once
    assert str(err.value).count("error[E033]") == 1
    assert "deep.rules:" in str(err.value)
    diag = err.value.diagnostics[0]
    assert (diag.code, diag.span.line, diag.span.col) == ("E033", 39, 35)
    assert diag.message == ("loops nested more than 16 deep (the limit of compiled engines); "
                            "move the inner loops into a def")


def test_an_option_with_17_parameters_is_refused():
    params = ", ".join(f"p{i}: int in 1..1" for i in range(17))
    text = game_text(f"  choose players[0] {{ go({params}) {{ n = 1 }} }}")
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(text, "deep.rules")
    diag = err.value.diagnostics[0]
    assert diag.code == "E033" and diag.message == "an option takes at most 16 parameters"
    assert (diag.span.line, diag.span.col) == (7, 304)


def test_the_deepest_nests_allowed_compile_and_agree():
    """16 nested loops in the flow and in a def, aggregates six deep inside and around them, and
    an option with 16 parameters whose test holds aggregates: one Python module, the same
    states on both back ends."""
    assert MAX_LOOP_NESTING == 16
    params = ", ".join(f"p{i}: int in 1..1" for i in range(16))
    extra = "def deep(k: int) -> int {\n  let r = 0\n" + nest(16, f"r += {DEEP_AGG} + k") \
        + "\n  return r + " + DEEP_AGG + "\n}\n"
    flow = (nest(16, f"n += {DEEP_AGG}") + "\n" + nest(11, f"n += deep({DEEP_AGG})")
            + f"\n  choose players[0] {{ go({params}) when {DEEP_AGG} == p3 * 64 {{ n += 1 }}"
            + " }")
    text = game_text(flow, extra)
    source = compile_program(rulelang.check_text(text, "deep.rules"))
    compile(source, "deep_engine.py", "exec")  # Python accepts the module
    states = []
    for backend in ("interpreter", "compiled"):
        s = rulelang.load_text(text, "deep.rules", backend=backend).new_game(2)
        assert s.legal_actions() == ["go(" + ", ".join(["1"] * 16) + ")"]
        s.apply_index(0)
        states.append((s.get_var("n"), s.digest()))
    assert states[0] == states[1]
    assert states[0][0] == 64 + (64 + 64 + 64) + 1
