"""The `view` section: checker diagnostics, evaluation from observations only, the fallback."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import rulelang
from rulelang import sim
from rulelang.view import param_labels
from rulelang.viewmodel import Viewer

ROOT = Path(__file__).resolve().parent.parent
GAMES = ["acquire", "automobile", "poder", "polanaftowe"]

BASE = """\
game V
players 2..3
grid Cell cols 1..3 rows A..B
enum Colour { Red, Blue }
state {
  hand: int[player] private = 0
  bag: set<Cell> hidden = Cell
  owner: player?[Cell] = none
  marked: set<Cell> = {}
  score_of: int[player] = 0
  tokens: int[Colour][player] = 0
  stock: int[Colour] = 4
  turn: int = 0
}
def peek() -> int = len(bag)
def public_total() -> int = sum(score_of[q] for q in players)
flow {
  for p in players {
    choose p {
      go(k: int in 1..3, c: Colour) {
        score_of[p] += k
      }
    }
  }
}
score p => score_of[p]
"""


def diagnostics(view: str) -> list[tuple[str, int, str]]:
    text = BASE + view
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(text, "v.rules")
    return [(d.code, d.span.line, d.message) for d in err.value.diagnostics]


def owner(placed: dict[str, int]) -> dict[str, int | None]:
    return {f"{c}{r}": placed.get(f"{c}{r}") for r in "AB" for c in (1, 2, 3)}


VIEW_LINE = BASE.count("\n") + 2  # the first line inside `view {`


@pytest.mark.parametrize("body, code, message", [
    ('show "bag" => len(bag),', "E050", "a view cannot read hidden state 'bag'"),
    ('show "peek" => peek(),', "E050", "a view cannot call 'peek': it reads hidden state 'bag'"),
    ('table "t" for q in players { col "h" => hand[q] },', "E050",
     "a view can read private state 'hand' only as 'hand[me]'"),
    ('board Colour as c { cell "x" },', "E051", "'Colour' is not a grid"),
    ('board Nope as c { cell "x" },', "E010", "undefined enum or grid 'Nope'"),
    ('label go(j: "amount"),', "E010", "undefined parameter 'j' of go"),
    ('label stop(k: "x"),', "E010", "undefined action 'stop'"),
    ('show "x" => tokens,', "E012", "a view cannot show a value of type int[Colour][player]"),
    ('show "x" => turn + true,', "E012", "expected int, found bool"),
])
def test_view_errors(body, code, message):
    diags = diagnostics("view {\n  " + body + "\n}\n")
    assert (code, VIEW_LINE, message) in [(c, line, m[:len(message)]) for c, line, m in diags]


def test_a_second_view_is_a_duplicate():
    diags = diagnostics('view {\n  show "t" => turn\n}\nview {\n  show "u" => turn\n}\n')
    assert diags == [("E011", VIEW_LINE + 2, "duplicate 'view' section")]


GOOD_VIEW = """\
view {
  board Cell as c {
    cell owner[c] when owner[c] != none,
    cell "*" when c in marked,
    cell "",
  },
  table "Colours" for c in Colour {
    col "stock" => stock[c],
    col "mine" => tokens[me][c],
    col "note" => "low" when stock[c] < 2,
  },
  show "Your secret" => hand[me],
  show "Total" => public_total(),
  show "Late" => "yes" when turn > 5,
  label go(k: "steps", c: "colour"),
}
"""


def test_view_model_is_built_from_the_observation():
    program = rulelang.check_text(BASE + GOOD_VIEW, "v.rules")
    game = rulelang.load_text(BASE + GOOD_VIEW, "v.rules")
    s = game.new_game(3)
    s.set_vars({"hand": [7, 8, 9], "owner": owner({"1A": 2, "3B": 0}),
                "marked": ["2A"], "tokens": [{"Red": 1, "Blue": 2}, {"Red": 0, "Blue": 0},
                                              {"Red": 3, "Blue": 0}],
                "stock": {"Red": 1, "Blue": 4}, "score_of": [1, 2, 3]})
    model = Viewer(program).model(s.observation(2))
    assert model["seat"] == 2 and model["current_player"] == 0
    assert model["items"] == [
        {"kind": "board", "title": "Cell", "cols": ["1", "2", "3"], "rows": ["A", "B"],
         "cells": [["P2 (you)", "*", ""], ["", "", "P0"]]},
        {"kind": "table", "title": "Colours", "columns": ["", "stock", "mine", "note"],
         "rows": [["Red", "1", "3", "low"], ["Blue", "4", "0", ""]]},
        {"kind": "show", "label": "Your secret", "text": "9"},
        {"kind": "show", "label": "Total", "text": "6"},
    ]
    assert param_labels(program)["go"] == ["steps", "colour"]


def test_fallback_view_from_types():
    program = rulelang.check_text(BASE, "v.rules")
    game = rulelang.load_text(BASE, "v.rules")
    s = game.new_game(2)
    s.set_vars({"hand": [5, 6], "owner": owner({"2B": 1}), "marked": ["1A"]})
    items = Viewer(program).model(s.observation(0))["items"]
    assert items == [
        {"kind": "board", "title": "Cell", "cols": ["1", "2", "3"], "rows": ["A", "B"],
         "cells": [["M", "", ""], ["", "P1", ""]]},
        {"kind": "show", "label": "marks", "text": "M = marked"},
        {"kind": "table", "title": "players", "columns": ["", "hand", "score_of"],
         "rows": [["P0 (you)", "5", "0"], ["P1", "?", "0"]]},
        {"kind": "table", "title": "tokens", "columns": ["", "Red", "Blue"],
         "rows": [["P0 (you)", "0", "0"], ["P1", "0", "0"]]},
        {"kind": "table", "title": "Colour", "columns": ["", "stock"],
         "rows": [["Red", "4"], ["Blue", "4"]]},
        {"kind": "show", "label": "turn", "text": "0"},
    ]


def _positions(name: str, players: int, seed: int, steps: int):
    game = rulelang.load(ROOT / "rules" / f"{name}.rules", backend="compiled")
    rng = random.Random(seed)
    s = game.new_game(players)
    out = []
    for i in range(steps):
        if s.is_terminal():
            break
        if s.current_player == sim.CHANCE:
            s.apply_index(sim.pick_chance(rng, s))
        else:
            s.apply_index(sim.pick_random_action(rng, s, game.end_actions))
        if i % 25 == 0:
            out.append(s.clone())
    return out


@pytest.mark.parametrize("name", GAMES)
def test_every_game_has_a_view_that_evaluates_at_every_seat(name):
    program = rulelang.check_file(ROOT / "rules" / f"{name}.rules")
    assert program.view is not None
    viewer = Viewer(program)
    for s in _positions(name, 3, 11, 400):
        for p in range(3):
            model = viewer.model(s.observation(p))
            text = json.dumps(model)
            # "?" is what a failed expression shows: a view never reads data it lacks
            assert '"?"' not in text, (name, p, text)


def test_acquire_view_shows_own_hand_only():
    program = rulelang.check_file(ROOT / "rules" / "acquire.rules")
    viewer = Viewer(program)
    for s in _positions("acquire", 3, 5, 200):
        for p in range(3):
            obs = s.observation(p)
            items = viewer.model(obs)["items"]
            board = items[0]
            hand = set(s.get_var("hand")[p])
            others = set().union(*(s.get_var("hand")[q] for q in range(3) if q != p))
            marked = {f"{c}{r}" for r, row in zip(board["rows"], board["cells"])
                      for c, x in zip(board["cols"], row) if x == "o"}
            assert marked == hand and not marked & others
            assert items[-2 if s.get_var("ending") else -1] == {
                "kind": "show", "label": "Your hand",
                "text": ", ".join(sorted(hand, key=lambda t: (t[-1], int(t[:-1])))) or "-"}


def test_views_agree_on_both_back_ends():
    program = rulelang.check_file(ROOT / "rules" / "poder.rules")
    viewer = Viewer(program)
    games = {b: rulelang.load(ROOT / "rules" / "poder.rules", backend=b)
             for b in ("interpreter", "compiled")}
    rng = random.Random(4)
    states = {b: g.new_game(3) for b, g in games.items()}
    for i in range(120):
        s = states["interpreter"]
        if s.is_terminal():
            break
        k = (sim.pick_chance(rng, s) if s.current_player == sim.CHANCE
             else rng.randrange(s.num_choices()))
        for st in states.values():
            st.apply_index(k)
        if i % 8:
            continue
        for p in range(3):
            models = [viewer.model(st.observation(p)) for st in states.values()]
            assert models[0] == models[1]
