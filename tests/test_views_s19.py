"""What the views of Automobile and Pola Naftowe show a player (audit P5, P6, P7): the model
spaces open to build, the spaces a produce asks about, and no stale sealed bids, auctions or
rolls from an earlier round. Each test checks the exact lines `text_view` prints, at a seat and
for a spectator, on both back ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rulelang
from rulelang.play import text_view
from rulelang.viewmodel import Viewer

ROOT = Path(__file__).resolve().parent.parent
_VIEWERS: dict[tuple, Viewer] = {}


def viewer(name: str, params: dict | None = None) -> Viewer:
    """The view of a rules file with these parameters (a view reads them, as the rules do)."""
    key = (name, tuple(sorted((params or {}).items())))
    if key not in _VIEWERS:
        _VIEWERS[key] = Viewer(rulelang.check_file(ROOT / "rules" / f"{name}.rules",
                                                   params=params))
    return _VIEWERS[key]


def lines(name: str, s, seat: int | None, params: dict | None = None) -> list[str]:
    """The view as printed at 120 columns, for a seat or (None) a spectator."""
    if seat is None:
        obs = json.loads(s.to_json())
        obs["player"] = None
    else:
        obs = s.observation(seat)
    text = text_view(viewer(name, params).model(obs, seat), 120)
    return [line.rstrip() for line in text.splitlines()]


def table(name: str, s, seat: int | None, title: str, params: dict | None = None) -> list[str]:
    """The lines of one table: its title, the header, the rule and one line per row."""
    out = lines(name, s, seat, params)
    start = out.index(title)
    end = start + 3
    while end < len(out) and out[end].startswith(" "):
        end += 1
    return out[start:end]


def shows(name: str, s, seat: int | None, params: dict | None = None) -> list[str]:
    """The `show` lines (labelled values), in order."""
    return [line for line in lines(name, s, seat, params) if not line.startswith((" ", "─"))
            and ": " in line]


def play(s, *actions: str) -> None:
    for a in actions:
        s.apply(a)


# ------------------------------------------------------------------ Automobile (P5)
@pytest.fixture
def auto(load_rules):
    return load_rules("automobile")


def auto_start(s) -> None:
    """3 players, seat 0 selects first; Kettering (R&D 8), Sloan (6), Howard (5)."""
    play(s, "first_player(0)", "demand_tile(2)", "demand_tile(3)", "demand_tile(4)",
         "pick(Kettering)", "pick(Sloan)", "pick(Howard)")


def test_automobile_lists_the_spaces_open_to_build(auto):
    s = auto.new_game(3)
    auto_start(s)
    # Empty track: Duryea 1, Oldsmobile 3, Franklin 6 R&D (L321-323); Maxwell's 10 > 8.
    assert table("automobile", s, 0, "Model track") == [
        "Model track",
        "              class   cost   R&D cost   owner   factories   parts   closed   cars"
        "   bonus   reduced",
        "─" * 100,
        " Duryea         Mid    200          1",
        " Oldsmobile     Mid    250          3",
        " Franklin       Mid    300          6",
    ]
    assert s.legal_actions()[:3] == ["build(Duryea, 0, true)", "build(Duryea, 1, false)",
                                     "build(Duryea, 1, true)"]
    play(s, "build(Franklin, 2, false)")
    # Seat 1 (6 R&D): behind Franklin free, then 1, 3, 6; Franklin is P0's.
    assert table("automobile", s, 1, "Model track")[3:] == [
        " Duryea            Mid    200          0",
        " Oldsmobile        Mid    250          0",
        " Franklin          Mid    300                 P0           2",
        " Maxwell           Mid    350          1",
        " Sears         Economy    300          3",
        " ThomasFlyer       Mid    400          6",
    ]
    # Seat 2 (5 R&D) cannot reach Thomas Flyer; a spectator sees the occupied spaces only.
    assert [r.split()[0] for r in table("automobile", s, 2, "Model track")[3:]] == [
        "Duryea", "Oldsmobile", "Franklin", "Maxwell", "Sears"]
    assert table("automobile", s, None, "Model track")[3:] == [
        " Franklin     Mid    300                 P0           2"]


def test_automobile_names_the_spaces_a_produce_asks_about(auto):
    s = auto.new_game(3)
    auto_start(s)
    play(s, "build(Franklin, 2, false)", "build(Sears, 1, false)", "take_rd()",
         "build(Maxwell, 1, false)", "take_rd()", "take_rd()")
    assert table("automobile", s, 0, "Model track")[3:] == [
        " Duryea            Mid    200          0",
        " Oldsmobile        Mid    250          0",
        " Franklin          Mid    300          0   P0 (you)           2",
        " Maxwell           Mid    350          0   P0 (you)           1",
        " Sears         Economy    300                    P1           1",
        " ThomasFlyer       Mid    400          1",
    ]
    last = "Produce: one make each, in order: Franklin, Maxwell"
    assert shows("automobile", s, 0)[-1] == last
    # One producing space: nothing to match, no line; a spectator has no spaces of his own.
    assert not any(x.startswith("Produce:") for x in shows("automobile", s, 1))
    assert not any(x.startswith("Produce:") for x in shows("automobile", s, None))
    play(s, "produce()")
    assert s.legal_actions() == ["make(0)", "make(4)", "make(5)", "make(6)", "make(7)",
                                 "take_loan()"]                 # Franklin: mid, 2 factories
    play(s, "make(4)")
    assert s.legal_actions() == ["make(0)", "make(1)", "make(2)", "make(3)", "take_loan()"]
    assert shows("automobile", s, 0)[-1] == last
    assert table("automobile", s, 0, "Model track")[5] == (
        " Franklin          Mid    300          0   P0 (you)           2                       4")


def test_automobile_turn_line_stops_at_the_last_turn(load_rules):
    one = {"turns": 1}
    s = load_rules("automobile", params=one).new_game(3)
    auto_start(s)
    assert shows("automobile", s, 0, one)[0] == "Turn, last turn: 1, 1"
    while not s.is_terminal():
        s.apply_index(0)
    assert s.get_var("turn") == 2
    assert shows("automobile", s, 0, one)[0] == "Turn, last turn: 1, 1"
    # The game is over: no space is open any more (no R&D cost, no empty space listed).
    assert table("automobile", s, 0, "Model track", one)[3:] == [
        " Duryea         Mid    200                                          closed",
        " Oldsmobile     Mid    250                 P1           2     yes",
        " Franklin       Mid    300                 P2           2     yes",
    ]


# ------------------------------------------------------------------ Pola Naftowe (P6, P7)
@pytest.fixture
def pola(load_rules):
    return load_rules("polanaftowe")


BANK = "Bank: tankers, refineries, barrels"
ROLLS = ["Demand (last roll): 13", "Demand dice (last roll): 1, 4, 2, 6",
         "Event (last roll): Boom", "Exempt from the event: P1"]


def test_pola_sealed_bids_auction_and_rolls_show_only_while_they_apply(pola):
    """The book's round 1 (L216-303, as tests/test_polanaftowe.py plays it), then round 2."""
    s = pola.new_game(4)
    play(s, "draw_field(PersianGulf)", "draw_field(Texas)", "draw_field(NorthSea)",
         "draw_field(IndianOcean)")
    # Before the first roll there is no demand, dice or event to show.
    assert shows("polanaftowe", s, 0) == ["Round, last round: 1, 5", f"{BANK}: 16, 9, 80"]
    play(s, "lobby(300)")
    # Sealed: the bidder sees it until the reveal; the others see nothing of it.
    assert shows("polanaftowe", s, 0) == ["Round, last round: 1, 5", f"{BANK}: 16, 9, 80",
                                          "Your sealed lobbying bid: 300"]
    assert shows("polanaftowe", s, 1) == ["Round, last round: 1, 5", f"{BANK}: 16, 9, 80"]
    play(s, "lobby(200)", "lobby(300)", "lobby(100)", "tie_die(6)", "tie_die(3)")
    # Revealed into the Players table: the sealed line is gone.
    assert shows("polanaftowe", s, 0) == ["Round, last round: 1, 5",
                                          "Lobbying winner: P0 (you)", f"{BANK}: 16, 9, 80"]
    play(s, "demand_die(1)", "demand_die(4)", "demand_die(2)", "demand_die(6)", "event_roll(5)",
         "exempt_player(1)")
    play(s, "buy_well(Texas)", "buy_well(Texas)", "buy_tanker()", "buy_refinery()",
         "done_building()")
    play(s, "buy_well(Texas)", "buy_well(Texas)", "buy_tanker()", "buy_refinery()",
         "done_building()")
    play(s, "buy_well(PersianGulf)", "buy_well(PersianGulf)", "buy_refinery()",
         "done_building()")
    play(s, "buy_well(PersianGulf)", "buy_well(NorthSea)", "buy_tanker()", "done_building()")
    play(s, "put_up(Tanker)", "pass_bid()", "bid(100)", "pass_bid()")
    auction = ["Auction: Tanker", "High bid: 100", "High bidder: P1"]
    assert shows("polanaftowe", s, 3) == (["Round, last round: 1, 5", "Lobbying winner: P0"]
                                          + ROLLS + auction + [f"{BANK}: 13, 6, 80"])
    play(s, "bid(200)", "pass_bid()")
    # The auction is over (refinery deliveries now): no auction lines.
    after = ["Round, last round: 1, 5", "Lobbying winner: P0 (you)"] + ROLLS
    assert shows("polanaftowe", s, 0) == after + [f"{BANK}: 12, 6, 45"]
    play(s, "deliver(3)", "deliver(3)", "deliver(3)", "declare(5)")
    assert shows("polanaftowe", s, 0) == after + [f"{BANK}: 12, 6, 54",
                                                  "Your sealed declaration: 5"]
    play(s, "declare(4)", "declare(0)", "declare(7)", "add_barrels()")
    # Revealed, then moved by the winner's 2 tankers (L177-179): not a sealed amount any more.
    assert s.get_var("declared")[0] == 7
    assert shows("polanaftowe", s, 0) == after + [f"{BANK}: 12, 6, 54"]
    play(s, "sell_first(0)", "declare(0)", "declare(1)", "declare(2)", "declare(5)")
    # Round 2's lobbying: the rolls say they are the last ones; round 1's sealed bid (300)
    # is not shown as if it were this round's (P7).
    assert s.phase == "lobbying" and s.current_player == 0
    round2 = ["Round, last round: 2, 5", "Lobbying winner: P0 (you)"] + ROLLS
    assert shows("polanaftowe", s, 0) == round2 + [f"{BANK}: 12, 6, 80"]
    play(s, "lobby(500)")
    assert shows("polanaftowe", s, 0) == round2 + [f"{BANK}: 12, 6, 80",
                                                   "Your sealed lobbying bid: 500"]
    assert shows("polanaftowe", s, None) == [
        "Round, last round: 2, 5", "Lobbying winner: P0"] + ROLLS + [f"{BANK}: 12, 6, 80"]


def test_pola_game_over_says_why_and_drops_the_auction(pola):
    s = pola.new_game(3)
    play(s, "draw_field(PersianGulf)", "draw_field(Texas)", "draw_field(NorthSea)",
         "lobby(100)", "lobby(100)", "lobby(100)", "tie_die(6)", "tie_die(1)", "tie_die(1)",
         "demand_die(3)", "demand_die(3)", "demand_die(3)", "event_roll(7)")
    s.set_vars({"cash": [3000, 0, 0]})
    play(s, "done_building()", "done_building()", "done_building()", "put_up(Tanker)")
    rolls = ["Demand (last roll): 9", "Demand dice (last roll): 3, 3, 3",
             "Event (last roll): Calm"]
    # P1 and P2 cannot raise and pass unasked; P0 is still to bid.
    assert shows("polanaftowe", s, 0) == (["Round, last round: 1, 5",
                                           "Lobbying winner: P0 (you)"] + rolls
                                          + ["Auction: Tanker", f"{BANK}: 12, 7, 80"])
    play(s, "bid(100)")
    # Fees: P1 and P2 cannot pay their tanker and are out; one player is left (L27-30).
    assert s.is_terminal()
    assert shows("polanaftowe", s, 1) == [
        "Round, last round: 1, 5", "Game over: only one player is left in the game",
        "Lobbying winner: P0"] + rolls + [f"{BANK}: 13, 7, 80"]
    assert table("polanaftowe", s, 1, "Players")[3:] == [
        " P0         2500         2            0       0         0         10      400       100"
        "          0",
        " P1 (you)      0         0            0       0         0          0        0       100"
        "          0   out",
        " P2            0         0            0       0         0          0        0       100"
        "          0   out",
    ]
