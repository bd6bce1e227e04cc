"""A list or array whose elements may be none, kept where they may not be (language.md section 4):
both back ends fault "value is none" at the list or array expression, wherever it is kept: a
state variable's initial value, a `let`, an assignment, a def's argument, a def's value (an
expression body and a `return`), a phase's argument, a nested list. Where the type allows the
nones (or there are none) the value is kept as it is. Found by the random programs (seed
151164): the interpreter kept the nones and faulted at the first read, the compiled engine
crashed at the first `+`."""

from __future__ import annotations

import pytest

import rulelang

HEAD = """
game NoneElements
players 2..2
enum City { A, B, C }
graph Map(City) { A - B: 2 }
param site: int = 0
"""

# path_cost from nowhere is none; from A it is none for C only (C has no edge)
FROM_NOWHERE = "[c => path_cost(Map, {}, c) for c in City]"
FROM_A = "[c => path_cost(Map, {A}, c) for c in City]"

BODY = f"""
state {{
  init: int[City] = [c => 0 for c in City]
  held: int[City] = [c => 0 for c in City]
  opt: int?[City] = {FROM_A}
  got: int = 0
}}

def total(xs: int[City]) -> int = sum(xs[c] for c in City)
def reach() -> int[City] = {FROM_A}
def reach_block(ok: bool) -> list<int> {{
  if ok {{
    return [0, 1]
  }}
  return [path_cost(Map, {{A}}, c) for c in City]
}}
def nested() -> list<list<int>> = [[1], [path_cost(Map, {{}}, A)]]

phase keep(xs: list<int>) {{
  got = len(xs)
}}

flow {{
  if site == 1 {{
    let xs: int[City] = {FROM_A}
    got = xs[A]
  }} elif site == 2 {{
    held = {FROM_A}
  }} elif site == 3 {{
    got = total({FROM_A})
  }} elif site == 4 {{
    got = total(reach())
  }} elif site == 5 {{
    got = len(reach_block(false))
  }} elif site == 6 {{
    run keep([path_cost(Map, {{A}}, c) for c in City])
  }} elif site == 7 {{
    got = len(nested())
  }} else {{
    opt = {FROM_A}
    got = len(reach_block(true)) + total([c => 1 for c in City])
  }}
  choose players[0] {{
    done() {{
    }}
  }}
}}

score p => got
"""

TEXT = HEAD + BODY


def _line_of(text: str, needle: str, nth: int = 1) -> int:
    lines = text.splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if needle in line]
    return hits[nth - 1]


def _outcome(backend: str, text: str, site: int):
    try:
        game = rulelang.load_text(text, "none.rules", params={"site": site}, backend=backend)
        state = game.new_game(2)
        return ("ok", state.digest(), state.scores() if state.is_terminal() else None)
    except rulelang.RulesRuntimeError as exc:
        return ("fault", exc.message, exc.location)


@pytest.mark.parametrize("site", range(9))
def test_nones_inside_lists_and_arrays_fault_at_the_value_on_both_back_ends(site):
    a = _outcome("interpreter", TEXT, site)
    b = _outcome("compiled", TEXT, site)
    assert a == b
    if site in (0, 8):  # where the nones are allowed, or there are none
        assert a[0] == "ok"
        return
    assert a[:2] == ("fault", "value is none")
    line, col = (int(x) for x in a[2].split(":")[1:])
    where = {1: ("let xs", 1), 2: ("held = [", 1), 3: ("got = total([", 1),
             4: ("def reach()", 1), 5: ("return [path_cost", 1), 6: ("run keep(", 1),
             7: ("def nested()", 1)}[site]
    assert line == _line_of(TEXT, where[0], where[1])
    text_line = TEXT.splitlines()[line - 1]
    assert text_line[col - 1] == "[", (text_line, col)  # the list or array expression


def test_a_state_variable_initialised_with_nones():
    text = TEXT.replace('init: int[City] = [c => 0 for c in City]',
                        f"init: int[City] = {FROM_NOWHERE}")
    a = _outcome("interpreter", text, 0)
    assert a == _outcome("compiled", text, 0)
    line = _line_of(text, "init: int[City]")
    col = text.splitlines()[line - 1].index("[c =>") + 1
    assert a == ("fault", "value is none", f"none.rules:{line}:{col}")
