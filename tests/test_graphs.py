"""Weighted graphs: declarations, checks and the cheapest-path builtins on both back ends."""

from __future__ import annotations

import pytest

import rulelang

GAME = """game G
players 2..2
enum City {{ A, B, C, D, E }}
graph Map(City) {{ A - B: 10, B - C: 5, A - C: 20, C - D: 1 }}
state {{ n: int? = none }}
flow {{
  n = {expr}
}}
score p => if n == none then -1 else n
"""


@pytest.mark.parametrize(("expr", "value"), [
    ("path_cost(Map, {A}, D)", 16),            # A-B-C-D beats A-C-D (21)
    ("path_cost(Map, [A], D, {A, C, D})", 21),  # B left out
    ("path_cost(Map, {A, D}, D)", 0),
    ("path_cost(Map, {A}, E)", -1),             # E has no edge: none
    ("path_cost(Map, {}, B)", -1),
    ("edge_cost(Map, C, B)", 5),
    ("edge_cost(Map, A, D)", -1),
    ("len(graph_neighbors(Map, C))", 3),
    ("sum(edge_cost(Map, C, x) for x in graph_neighbors(Map, C))", 26),
])
def test_graph_builtins(backend, expr, value):
    game = rulelang.load_text(GAME.format(expr=expr), "g.rules", backend=backend)
    assert game.new_game(2).scores() == [value, value]


@pytest.mark.parametrize(("graph", "code", "where"), [
    ("graph Map(City) { A - Q: 1 }", "E010", (4, 19)),
    ("graph Map(City) { A - A: 1 }", "E012", (4, 19)),
    ("graph Map(City) { A - B: 1, B - A: 2 }", "E011", (4, 29)),
    ("graph Map(Town) { A - B: 1 }", "E010", (4, 7)),
])
def test_graph_declaration_errors(graph, code, where):
    text = GAME.format(expr="0").replace("graph Map(City) { A - B: 10, B - C: 5, A - C: 20, "
                                         "C - D: 1 }", graph)
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(text, "g.rules")
    d = err.value.diagnostics[0]
    assert (d.code, d.span.line, d.span.col) == (code, *where)


def test_graph_builtin_argument_errors():
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(GAME.format(expr="path_cost(City.A, {A}, D)"), "g.rules")
    assert err.value.diagnostics[0].code == "E012"
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(GAME.format(expr="path_cost(Map, {A})"), "g.rules")
    assert err.value.diagnostics[0].code == "E013"
