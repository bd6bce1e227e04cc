"""Array constructors `[k => v for k in T]` and array literals `[M1 => v1, ...]`: checks and
exact values on both back ends."""

from __future__ import annotations

import pytest

import rulelang

GAME = """game Arr
players 2..3
enum Res { Coal, Oil, Garbage, Uranium }
grid Cell cols 1..2 rows A..B
def start_price(r: Res) -> int = if r == Uranium then 14 else 3 * (4 - count(x < r for x in Res))
const START: int[Res] = [Oil => 18, Coal => 24, Uranium => 2, Garbage => 6]
state {
  price: int[Res] = [r => start_price(r) for r in Res]
  stock: int[Res][player] = [p => [r => 0 for r in Res] for p in players]
  seats: int[player] = [p => 10 * count(q < p for q in players) for p in players]
  cells: bool[Cell] = [c => c.col == 2 for c in Cell]
  limits: int[Res] = START
}
flow {
  let twice = [r => 2 * price[r] for r in Res]
  stock[players[1]] = [Uranium => twice[Uranium], Coal => 1, Garbage => 3, Oil => 2]
  stock[players[0]][Oil] += 5
  limits = [r => limits[r] - 1 for r in Res]
  choose players[0] { done() { } }
}
score p => sum(stock[p][r] for r in Res) + seats[p]
"""


def test_constructors_and_literals_build_arrays(backend):
    game = rulelang.load_text(GAME, "arr.rules", backend=backend)
    s = game.new_game(3)
    # start_price: 3 * (4 - members before r): Coal 12, Oil 9, Garbage 6; Uranium 14
    assert s.get_var("price") == {"Coal": 12, "Oil": 9, "Garbage": 6, "Uranium": 14}
    zero = {"Coal": 0, "Oil": 0, "Garbage": 0, "Uranium": 0}
    assert s.get_var("stock") == [{**zero, "Oil": 5},
                                  {"Coal": 1, "Oil": 2, "Garbage": 3, "Uranium": 28}, zero]
    assert s.get_var("seats") == [0, 10, 20]
    assert s.get_var("cells") == {"1A": False, "2A": True, "1B": False, "2B": True}
    # the literal names its members in any order; the array is in member order
    assert s.get_var("limits") == {"Coal": 23, "Oil": 17, "Garbage": 5, "Uranium": 1}
    assert s.scores() == [5, 34 + 10, 20]


def test_nested_constructor_has_the_nested_array_type():
    program = rulelang.check_text(GAME, "arr.rules")
    assert str(program.state_types["stock"]) == "int[Res][player]"
    init = next(v.init for v in program.state_vars if v.name == "stock")
    assert str(program.types[init]) == "int[Res][player]"


def test_literal_values_are_evaluated_in_member_order(backend):
    # Both back ends compute the values in member order, so the first fault is the same.
    text = GAME.replace("Coal => 24", "Coal => 24 // (len(START) - 4)").replace(
        "Oil => 18", "Oil => 18 % (len(START) - 4)")
    text = text.replace("len(START)", "len([1, 2, 3, 4])")
    with pytest.raises(rulelang.RulesRuntimeError) as err:
        rulelang.load_text(text, "arr.rules", backend=backend).new_game(2)
    assert err.value.message == "division by zero"
    assert err.value.location == "arr.rules:6:71"  # Coal's value, after Oil's in the text


@pytest.mark.parametrize(("snippet", "code", "col"), [
    ("[Coal => 1, Oil => 2, Garbage => 3]", "E043", 12),
    ("[Coal => 1, Oil => 2, Garbage => 3, Uranium => 4, Oil => 5]", "E043", 62),
    ("[r => 1 for r in [Coal]]", "E042", 29),
    ("[Coal => 1, Oil => true, Garbage => 3, Uranium => 4]", "E012", 31),
])
def test_bad_array_expressions(snippet, code, col):
    text = GAME.replace("limits = [r => limits[r] - 1 for r in Res]", f"limits = {snippet}")
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(text, "arr.rules")
    d = err.value.diagnostics[0]
    assert (d.code, d.span.line, d.span.col) == (code, 18, col)
