"""Display names in the front ends, and typed amounts in `play` (issue 9 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

import rulelang
from rulelang.play import InputError, Session, menu_lines, resolve
from rulelang.view import arg_display, display_aliases

CITIES = """\
game Cities
players 2..2
enum City { Lodz "Łódź", Wien, Koln "Köln", DenHaag "Den Haag" }
state {
  at: City = Wien
  houses: int[City] = 0
}
flow {
  for p in players {
    choose p {
      build(c: City) { at = c  houses[c] += 1 }
    }
  }
}
score p => houses[at]
"""


@pytest.fixture
def cities(tmp_path) -> str:
    path = tmp_path / "cities.rules"
    path.write_text(CITIES, encoding="utf-8")
    return str(path)


def test_display_names_are_shown_and_action_strings_stay_ascii(cities, backend):
    game = rulelang.load(cities, backend=backend)
    s = game.new_game(2)
    assert s.legal_actions() == ["build(Lodz)", "build(Wien)", "build(Koln)", "build(DenHaag)"]
    s.apply("build(Lodz)")
    assert s.get_var("at") == "Lodz"  # JSON, digests and records use the names
    program = rulelang.check_file(cities)
    assert program.enums["City"].display == ["Łódź", "Wien", "Köln", "Den Haag"]
    assert arg_display(program) == {"build": [{"Lodz": "Łódź", "Koln": "Köln",
                                               "DenHaag": "Den Haag"}]}


def test_the_session_shows_display_names_and_reads_them(cities):
    session = Session(cities, ["human", "human"], seed=1, backend="interpreter")
    legal = session.state.legal_actions()
    assert menu_lines(legal, session.labels, session.display) == [
        "  build (c)  1) Łódź   2) Wien   3) Köln   4) Den Haag"]
    # typed by display name (any case), by name, or by number
    assert resolve("build łódź", legal, session.aliases) == 0
    assert resolve("BUILD(Den Haag)", legal, session.aliases) == 3
    assert resolve("build koln", legal, session.aliases) == 2
    assert resolve("köln", legal, session.aliases) == 2
    session.play(0, 0)
    assert session.log_lines(None) == ["P0: build(Łódź)"]
    model = session.view(0)
    shows = {i["label"]: i["text"] for i in model["items"] if i["kind"] == "show"}
    assert shows["at"] == "Łódź"
    table = next(i for i in model["items"] if i["kind"] == "table" and i["title"] == "City")
    assert [row[0] for row in table["rows"]] == ["Łódź", "Wien", "Köln", "Den Haag"]
    assert table["rows"][0][1] == "1"


def test_web_menu_options_show_display_names(cities):
    pytest.importorskip("starlette")
    from rulelang.web import WebTable

    table = WebTable(Session(cities, ["human", "human"], seed=1, backend="interpreter"))
    msg = table.message(0)
    assert msg["menu"][0]["options"] == [[0, "Łódź"], [1, "Wien"], [2, "Köln"], [3, "Den Haag"]]


def test_a_display_name_two_enums_share_means_the_legal_one():
    program = rulelang.check_text(CITIES.replace(
        "enum City {", 'enum Town { Lodzia "Łódź", Other }\nenum City {'), "c.rules")
    aliases = display_aliases(program)
    assert aliases["łódź"] == ("Lodz", "Lodzia") and aliases["köln"] == ("Koln",)
    assert resolve("build łódź", ["build(Wien)", "build(Lodz)"], aliases) == 1
    with pytest.raises(InputError, match="'łódź' could be Lodz, Lodzia: type the name"):
        resolve("łódź", ["build(Lodz)", "visit(Lodzia)"], aliases)


def test_a_display_name_is_read_by_its_head():
    """Power Grid's areas show as "green: Netherlands north/east"; `green` is what a player
    types, and it names BnlGreen on the Benelux map and CeGreen on the Central Europe one."""
    program = rulelang.check_text(CITIES.replace(
        "enum City {", 'enum Area { NlGreen "green: north", CzGreen "green: Czechia", '
                       'Red "red: south" }\nenum City {'), "c.rules")
    aliases = display_aliases(program)
    assert aliases["green"] == ("CzGreen", "NlGreen") and aliases["red"] == ("Red",)
    nl = ["pick(NlGreen)", "pick(Red)"]
    assert resolve("green", nl, aliases) == 0
    assert resolve("pick green", ["pick(Red)", "pick(CzGreen)"], aliases) == 1
    assert resolve("pick green: north", nl, aliases) == 0
    assert resolve("RED", nl, aliases) == 1  # the member's own name, as it is


def test_a_non_ascii_name_is_a_clear_error():
    with pytest.raises(rulelang.RulesError) as err:
        rulelang.check_text(CITIES.replace("Lodz \"Łódź\"", "Łódź"), "c.rules")
    (d,) = err.value.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("E001", 3, 13)
    assert d.message == ("unexpected character 'Ł' (U+0141); names and symbols are ASCII only")


AUCTION = """\
game Auction
players 2..3
enum Plant { P13, P15, P20 }
state {
  up: Plant = P13
  price: int = 0
}
def min_bid(q: Plant) -> int = if q == P13 then 13 else if q == P15 then 15 else 20
flow {
  choose players[0] {
    bid(plant: Plant, amount: int in 3..200) when plant == up and amount >= min_bid(plant) {
      price = amount
    }
    pass() { }
  }
}
score p => price
"""


@pytest.fixture
def auction(tmp_path) -> str:
    path = tmp_path / "auction.rules"
    path.write_text(AUCTION, encoding="utf-8")
    return str(path)


def test_a_long_bid_range_is_one_menu_line_and_typed_amounts_are_read(auction):
    session = Session(auction, ["human", "random"], seed=1, backend="compiled")
    legal = session.state.legal_actions()
    assert len(legal) == 188 + 1  # bid(P13, 13..200) and pass()
    assert menu_lines(legal, session.labels, session.display) == [
        "  bid (plant, amount)  188 choices: plant P13; amount 13..200",
        "                       (type e.g.: bid P13 13; '? bid' lists them)",
        "  pass                 1)"]
    for typed in ("bid 23", "bid(23)", "bid P13 23", "BID(P13, 23)", "bid(P13,23)"):
        assert legal[resolve(typed, legal, session.aliases)] == "bid(P13, 23)", typed
    for typed, message in (("bid 12", "'bid 12' is not legal now"),
                           ("bid 201", "'bid 201' is not legal now"),
                           ("bid P15 23", "'bid P15 23' is not legal now"),
                           ("bid", "bid needs its parameters (188 choices)")):
        with pytest.raises(InputError) as err:
            resolve(typed, legal, session.aliases)
        assert message in str(err.value)
    session.play(0, resolve("bid 23", legal, session.aliases))
    assert session.state.is_terminal() and session.state.scores() == [23, 23]


def test_an_amount_is_not_read_without_its_other_parameter_when_that_varies(auction):
    text = Path(auction).read_text(encoding="utf-8").replace("plant == up and ", "")
    Path(auction).write_text(text, encoding="utf-8")
    session = Session(auction, ["human", "random"], seed=1, backend="interpreter")
    legal = session.state.legal_actions()
    # bids on P13 from 13, P15 from 15, P20 from 20: the amount alone names three actions
    assert menu_lines(legal, session.labels, session.display)[0] == (
        "  bid (plant, amount)  555 choices: plant P13, P15, P20; amount 13..200")
    with pytest.raises(InputError) as err:
        resolve("bid 23", legal, session.aliases)
    assert "'bid 23' is not legal now" in str(err.value)
    assert legal[resolve("bid p15 23", legal, session.aliases)] == "bid(P15, 23)"
