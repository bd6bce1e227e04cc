"""Golden scenarios for rules/powergrid.rules on both back ends.

"Lnn" is line nn of the rules summary (seed 001_a9ee109f7f0ae661.txt), "Pn" an ambiguity of the
digest, read as rules/powergrid.rules and docs/readings.md say. The book has no worked example,
so every expected number is worked out by hand in the comment next to it, from the rules and the
data in rules/data/powergrid/ (edge costs are quoted from map_*.json).

Positions are reached by playing (the `drive` policy: open the cheapest plant at its number,
never raise, buy and build nothing, run no plant, first chance outcome), then prepared with
set_vars at a decision, as tests/test_acquire.py does. Areas are the fixed ones
(choose_areas=false): Benelux 2-3 players green, brown, yellow; Central Europe 2-3 players blue
(east Poland), brown (Slovakia), red (west Poland).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import random
import re

import pytest

import rulelang
from rulelang import CHANCE, TERMINAL, IllegalAction
from tests.conftest import RULES

PATH = os.path.join(RULES, "powergrid.rules")
DATA = os.path.join(RULES, "data", "powergrid")
FIXED = {"choose_areas": False}


@pytest.fixture
def pg(load_rules):
    def _game(variant: str = "benelux", **params):
        return load_rules("powergrid", variant=variant, params={**FIXED, **params})
    return _game


def policy(s) -> str:
    """The default move at a decision."""
    legal = s.legal_actions()
    for quiet in ("pass_bid()", "done_buying()", "done_building()", "stop_firing()"):
        if quiet in legal:
            return quiet
    return legal[0]


def drive(s, stop) -> None:
    """Play the default moves (first chance outcome) until stop(s) holds."""
    for _ in range(10000):
        if stop(s):
            return
        assert s.current_player != TERMINAL, "game over before the stop condition"
        if s.current_player == CHANCE:
            s.apply(s.chance_outcomes()[0][0])
        else:
            s.apply(policy(s))
    raise AssertionError("stop condition never reached")


def start(game, n: int):
    """Round 1, first decision: default removals, seats drawn in seat order (order = 0, 1, ...)."""
    s = game.new_game(n)
    seat = 0
    while s.current_player == CHANCE:
        outcomes = [a for a, _ in s.chance_outcomes()]
        if outcomes[0].startswith("seat("):
            s.apply(f"seat({seat})")
            seat += 1
        else:
            s.apply(outcomes[0])
    assert s.get_var("order") == list(range(n))
    return s


def at_phase(name: str):
    return lambda s: s.current_player >= 0 and s.phase == name


def first_build(game, n: int = 2):
    """Round 1's first build decision. With the default moves, player 0 buys plant 3 for 3 and
    player 1 plant 4 for 4; L94 orders by plant: [1, 0]; L55: player 0 builds first."""
    s = start(game, n)
    drive(s, at_phase("build"))
    assert s.current_player == 0
    assert s.get_var("cash")[:2] == [47, 46]
    return s


def arrange(s, market=None, top=None, under=None, **more) -> None:
    """Set the plant market and the known parts of the deck; the named plants leave the hidden
    middle, so every plant stays in one place."""
    placed = set(market or []) | set(top or []) | set(under or [])
    for p in more.get("owned", []):
        placed |= set(p)
    values = dict(more)
    values["middle"] = [c for c in s.get_var("middle") if c not in placed]
    if market is not None:
        values["market"] = market
    if top is not None:
        values["top"] = top
    if under is not None:
        values["under"] = under
    s.set_vars(values)


def fuel(coal=0, oil=0, garbage=0, uranium=0) -> dict:
    return {"Coal": coal, "Oil": oil, "Garbage": garbage, "Uranium": uranium}


def houses(*taken: tuple[list[str], int]) -> dict:
    out = {c: 0 for c in _cities()}
    for cities, k in taken:
        for c in cities:
            out[c] = k
    return out


@functools.cache
def _cities() -> tuple[str, ...]:
    names: list[str] = []
    for f in ("map_benelux.json", "map_central_europe.json"):
        with open(os.path.join(DATA, f), encoding="utf-8") as fh:
            names += [_ident(c["name"]) for c in json.load(fh)["cities"]]
    return tuple(names)


@functools.cache
def _convert():
    spec = importlib.util.spec_from_file_location("pg_convert", os.path.join(DATA, "convert.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _ident(name: str) -> str:
    return _convert().ident(name)


GREEN = ["Groningen", "Enschede", "Apeldoorn", "Arnhem", "Leeuwarden", "Nijmegen", "DenHelder"]
BROWN = ["Zaanstad", "Amsterdam", "Utrecht", "Haarlem", "Leiden", "DenHaag", "Rotterdam"]
YELLOW = ["Hertogenbosch", "Venlo", "Eindhoven", "Tilburg", "Breda", "Middelburg", "Maastricht"]


# ------------------------------------------------------------------------ connection costs

def test_first_house_and_a_second_through_an_empty_city(pg):
    s = first_build(pg())
    # L105: the first house costs its "10" slot: 47 - 10 = 37.
    s.apply("build(Amsterdam)")
    assert s.get_var("cash")[0] == 37
    # L106: Den Helder from Amsterdam: Amsterdam-Zaanstad 1 + Zaanstad-Den Helder 6 = 7 through
    # the empty Zaanstad (Amsterdam-Haarlem 2 + Haarlem-Den Helder 7 = 9 is dearer; no direct
    # edge): 10 + 7 = 17, so 37 - 17 = 20.
    s.apply("build(DenHelder)")
    assert s.get_var("cash")[0] == 20
    assert s.get_var("network")[0] == ["DenHelder", "Amsterdam"]   # City order: green first
    s.apply("done_building()")
    # L36, L107: Step 1 allows one house per city, so player 1 cannot join Amsterdam.
    assert s.current_player == 1
    assert "build(Amsterdam)" not in s.legal_actions()
    with pytest.raises(IllegalAction):
        s.apply("build(Amsterdam)")
    # Zaanstad has no house yet: the first house of player 1 costs 10: 46 - 10 = 36.
    s.apply("build(Zaanstad)")
    assert s.get_var("cash")[1] == 36
    assert s.get_var("houses")["Zaanstad"] == 1


def test_blocked_areas_are_not_in_play(pg):
    s = first_build(pg())
    # L10: with 2 players Benelux plays 3 areas; the fixed ones are green, brown and yellow.
    assert s.get_var("areas") == ["BnlGreen", "BnlBrown", "BnlYellow"]
    builds = [a for a in s.legal_actions() if a.startswith("build(")]
    assert builds == [f"build({c})" for c in GREEN + BROWN + YELLOW]


def test_free_brussel_bruxelles_link(pg):
    s = first_build(pg())
    # All Benelux cities in play (as with 5 players); player 0 has a house in Brussel.
    cities = list(_cities()[:35])
    s.set_vars({"in_play": cities, "network": [["Brussel"], []],
                "houses": houses((["Brussel"], 1))})
    # L106: Brussel-Bruxelles costs 0: the house costs its slot only, 47 - 10 = 37.
    s.apply("build(Bruxelles)")
    assert s.get_var("cash")[0] == 37
    # Leuven: Brussel-Leuven 2: 10 + 2 = 12, 37 - 12 = 25.
    s.apply("build(Leuven)")
    assert s.get_var("cash")[0] == 25


def test_free_links_on_central_europe(pg):
    s = first_build(pg("central_europe"))
    assert s.get_var("areas") == ["CeBlue", "CeBrown", "CeRed"]
    s.apply("build(Gdynia)")                     # 47 - 10 = 37
    s.apply("build(Gdansk)")                     # Gdynia-Gdańsk 0: 37 - 10 = 27
    assert s.get_var("cash")[0] == 27
    s.set_vars({"network": [["Sosnowiec"], []],
                "houses": houses((["Sosnowiec"], 1))})
    s.apply("build(Katowice)")                   # Sosnowiec-Katowice 0: 27 - 10 = 17
    assert s.get_var("cash")[0] == 17


# ------------------------------------------------------------------------------- auction

def test_auction_with_reopening(pg):
    s = start(pg(), 3)
    # L79: no pass in round 1.
    assert s.legal_actions() == ["open(P03)", "open(P04)", "open(P05)", "open(P06)"]
    s.apply("open(P03)")
    # L80: at least the plant's number, at most the cash: 3..50.
    assert s.legal_actions() == [f"bid({b})" for b in range(3, 51)]
    s.apply("bid(3)")
    # P12: bidding goes up the seats from the opener: seat 1, then 2, then back to 0.
    assert s.current_player == 1
    s.apply("bid(4)")
    assert s.current_player == 2
    s.apply("pass_bid()")                        # out of this auction only (L85)
    assert s.current_player == 0
    s.apply("pass_bid()")
    # Player 1 pays 4 (L86); plant 13 (top of the deck, L25) replaces plant 3.
    assert s.get_var("cash") == [50, 46, 50]
    assert s.get_var("owned") == [[], ["P03"], []]
    assert s.get_var("market") == ["P04", "P05", "P06", "P07", "P08", "P09", "P10", "P13"]
    # L91: the opener did not win, so player 0 opens again; player 1 has bought and sits out.
    assert s.current_player == 0
    s.apply("open(P05)")
    s.apply("bid(5)")
    assert s.current_player == 2                 # seat 1 is skipped
    s.apply("bid(6)")
    assert s.current_player == 0
    s.apply("bid(9)")
    s.apply("pass_bid()")                        # player 2 lets it go at 9
    assert s.get_var("cash") == [41, 46, 50]
    # Player 2 is left alone: opens plant 4 and wins it at the opening bid.
    while s.current_player == CHANCE:            # plant 5's replacement comes from the middle
        s.apply(s.chance_outcomes()[0][0])
    assert s.current_player == 2
    s.apply("open(P04)")
    s.apply("bid(4)")
    assert s.get_var("cash") == [41, 46, 46]
    assert s.get_var("owned") == [["P05"], ["P03"], ["P04"]]
    # L94: round 1's order by plant number: 5 (player 0), 4 (player 2), 3 (player 1).
    while s.current_player == CHANCE:
        s.apply(s.chance_outcomes()[0][0])
    assert s.get_var("order") == [0, 2, 1]


def test_plant_limit_moves_fuel_and_discards_the_rest(pg):
    s = start(pg("central_europe"), 3)
    # Player 0 holds coal plant 15 (stores 4), hybrids 12 and 21 (4 each), and 6 coal + 6 oil:
    # coal 6 <= 4 + 8, oil 6 <= 0 + 8, together 12 <= 12: it all fits (L66-67).
    arrange(s, market=["P07", "P08", "P09", "P10", "P20", "P22", "P24", "P25"],
            owned=[["P12", "P15", "P21"], [], []], fuel=[fuel(6, 6), fuel(), fuel()])
    s.apply("open(P09)")                         # oil plant 9: 1 oil, stores 2
    s.apply("bid(9)")
    s.apply("pass_bid()")
    s.apply("pass_bid()")
    while s.current_player == CHANCE:
        s.apply(s.chance_outcomes()[0][0])
    # L89, P9: 4 plants with 3 players: one of the others goes (not plant 9).
    assert s.current_player == 0
    assert s.legal_actions() == ["discard(P12)", "discard(P15)", "discard(P21)"]
    s.apply("discard(P21)")
    # L90: kept: coal 4 (P15), oil 2 (P09), hybrid 4 (P12). Coal 6 <= 8 and oil 6 <= 6 each fit,
    # but 12 > 4 + 2 + 4 = 10: two units must go. Both coal (6 > 4) and oil (6 > 2) spill into
    # the hybrid, so the player chooses.
    assert s.legal_actions() == ["drop_fuel(Coal)", "drop_fuel(Oil)"]
    s.apply("drop_fuel(Coal)")                   # 5 + 6 = 11 > 10: still one too many
    assert s.legal_actions() == ["drop_fuel(Coal)", "drop_fuel(Oil)"]
    s.apply("drop_fuel(Oil)")                    # 5 + 5 = 10: fits
    assert s.get_var("owned")[0] == ["P09", "P12", "P15"]
    assert s.get_var("fuel")[0] == fuel(5, 5)
    # The dropped units go back to the supply: Central Europe starts with 24 coal and 18 oil on
    # the market, so the supply was 0 coal and 6 oil; now 1 and 7.
    assert s.get_var("supply") == {"Coal": 1, "Oil": 7, "Garbage": 18, "Uranium": 7}
    assert s.current_player == 1                 # the next opener


# ------------------------------------------------------------------------- minimum rule

def test_minimum_rule_cascades(pg):
    s = first_build(pg())
    five = ["Amsterdam", "Haarlem", "Zaanstad", "Leiden", "DenHaag"]
    arrange(s, market=["P05", "P07", "P08", "P10", "P13", "P14", "P15", "P16"],
            top=["P06", "P09", "P18"], owned=[["P03"], ["P04"]],
            network=[five, []], houses=houses((five, 1)))
    # Utrecht: Amsterdam-Utrecht 4 (Leiden-Utrecht 4 too): 10 + 4 = 14; 47 - 14 = 33.
    s.apply("build(Utrecht)")
    assert s.get_var("cash")[0] == 33
    # L73, P1-P2: the leader now has 6 cities: plant 5 leaves, plant 6 comes from the top and
    # leaves too, plant 9 comes; the cheapest, 7, is above 6: stop.
    assert s.get_var("market") == ["P07", "P08", "P09", "P10", "P13", "P14", "P15", "P16"]
    assert s.get_var("top") == ["P18"]


# ---------------------------------------------------------------------------------- steps

def test_step2_transition(pg):
    s = first_build(pg())
    nine = GREEN + ["Zaanstad", "Amsterdam"]
    arrange(s, market=["P20", "P21", "P22", "P23", "P24", "P25", "P26", "P27"],
            top=["P28", "P29", "P30"], owned=[["P03"], ["P04"]],
            network=[nine, []], houses=houses((nine, 1)), cash=[100, 46])
    # The 10th house (L26: Step 2 at 10 with 2 players): Haarlem, Amsterdam-Haarlem 2 (or
    # Zaanstad-Haarlem 2): 10 + 2 = 12, 100 - 12 = 88.
    s.apply("build(Haarlem)")
    assert s.get_var("cash")[0] == 88
    s.apply("done_building()")
    # P3: Step 2 waits for the end of the phase: player 1 still may not share a city.
    assert s.current_player == 1
    assert "build(Haarlem)" not in s.legal_actions()
    assert s.get_var("game_step") == 1
    s.apply("done_building()")
    # L110-112: plant 20 leaves, plant 28 replaces it. Bureaucracy (nobody has fuel, so no
    # decision) refills with Step 2 numbers (Benelux, 2 players): coal 2, oil 4, garbage 2,
    # uranium 1, as far as the spaces allow: coal 18 + 2 = 20, oil 24 (full, the 24 spaces are
    # taken), garbage 6 + 2 = 8, uranium 2 + 1 = 3. (Step 1 would add 1 garbage.)
    # L122, L125, P7: then the cheapest (21) leaves and the highest (28) goes under the deck at
    # once; 29 and 30 fill the gaps.
    assert s.get_var("game_step") == 2
    assert s.get_var("res_market") == {"Coal": 20, "Oil": 24, "Garbage": 8, "Uranium": 3}
    assert s.get_var("market") == ["P22", "P23", "P24", "P25", "P26", "P27", "P29", "P30"]
    assert s.get_var("under") == ["P28"]
    # L52: round 2's order: most cities first.
    assert s.get_var("round") == 2
    assert s.get_var("order") == [0, 1]
    # Step 2: a second house in a city is allowed from the next building phase on.
    assert s.current_player == 0 and s.phase == "auction"


def _deck_ends_in_step3(s, under, market=None, **more):
    """The deck is empty down to the Step 3 card, with `under` below it."""
    s.set_vars({"top": [], "step3_in_deck": True})
    arrange(s, market=market, under=under, **more)
    s.set_vars({"middle": []})


@pytest.mark.parametrize("step", [1, 2])
def test_step3_card_in_the_auction(pg, step):
    s = start(pg(), 2)
    _deck_ends_in_step3(s, ["P20", "P21"], game_step=step)
    s.apply("open(P03)")
    s.apply("bid(3)")
    s.apply("pass_bid()")
    # L88: the card comes up: it is the highest card of the market, never on offer; the deck
    # (the plants under it) is shuffled.
    assert s.get_var("step3_in_market") is True
    assert s.get_var("market") == ["P04", "P05", "P06", "P07", "P08", "P09", "P10"]
    assert s.get_var("middle") == ["P20", "P21"]
    assert s.current_player == 1
    assert s.legal_actions() == ["open(P04)", "open(P05)", "open(P06)", "open(P07)"]
    s.apply("open(P04)")
    s.apply("bid(4)")
    assert s.current_player == CHANCE             # plant 4's replacement from the new deck
    s.apply("draw_plant(P21)")
    if step == 1:
        # L45, P4: still in Step 1: first the Step 2 actions: plant 5 leaves and is replaced
        # (the only card left, 20).
        assert [a for a, _ in s.chance_outcomes()] == ["draw_plant(P20)"]
        s.apply("draw_plant(P20)")
        # L95: then the card and the cheapest (6) leave, with no replacement.
        expected = ["P07", "P08", "P09", "P10", "P20", "P21"]
    else:
        # L95: the card and the cheapest (5) leave, with no replacement: 6 plants (L44).
        expected = ["P06", "P07", "P08", "P09", "P10", "P21"]
    drive(s, lambda s: s.current_player >= 0)
    assert s.get_var("market") == expected
    assert s.get_var("game_step") == 3
    assert s.get_var("step3_in_market") is False


@pytest.mark.parametrize("step", [1, 2])
def test_step3_card_while_building(pg, step):
    s = first_build(pg())
    four = ["Groningen", "Leeuwarden", "Enschede", "Apeldoorn"]
    _deck_ends_in_step3(s, ["P20", "P21"],
                        market=["P05", "P06", "P07", "P08", "P09", "P10", "P13", "P14"],
                        owned=[["P03"], ["P04"]], network=[four, []], houses=houses((four, 1)),
                        game_step=step)
    # Arnhem: Apeldoorn-Arnhem 3 (Enschede-Arnhem 7): 10 + 3 = 13; 47 - 13 = 34.
    s.apply("build(Arnhem)")
    assert s.get_var("cash")[0] == 34
    # L73: 5 cities: plant 5 leaves; its replacement is the Step 3 card (L109): the deck is
    # shuffled (20, 21).
    if step == 1:
        # P4: in Step 1 the Step 2 actions first: plant 6 leaves, replaced by a draw from the
        # new deck; then plant 7 (the cheapest) leaves with no replacement: 6 plants.
        assert s.current_player == CHANCE
        s.apply("draw_plant(P20)")
        assert s.get_var("market") == ["P08", "P09", "P10", "P13", "P14", "P20"]
        last = ["draw_plant(P21)"]
    else:
        # The card and the cheapest (6) leave with no replacement: 6 plants.
        assert s.get_var("market") == ["P07", "P08", "P09", "P10", "P13", "P14"]
        last = ["draw_plant(P20)", "draw_plant(P21)"]
    assert s.get_var("step3_after_build") is True
    # P4: the slot limit stays at one house per city until the phase ends.
    s.apply("done_building()")
    assert "build(Arnhem)" not in s.legal_actions()
    s.apply("done_building()")
    # After building: Step 3 (L109). Bureaucracy refills with Step 3 numbers (Benelux, 2
    # players): coal 4, oil 3, garbage 3, uranium 1: coal 18 + 4 = 22, oil 24 (full), garbage
    # 6 + 3 = 9, uranium 2 + 1 = 3. L122-123, P8: in Step 3 the cheapest plant leaves once and
    # is replaced from the deck (21).
    assert s.get_var("game_step") == 3
    assert s.get_var("res_market") == {"Coal": 22, "Oil": 24, "Garbage": 9, "Uranium": 3}
    assert [a for a, _ in s.chance_outcomes()] == last
    s.apply("draw_plant(P21)")
    if step == 1:
        assert s.get_var("market") == ["P09", "P10", "P13", "P14", "P20", "P21"]   # 8 left
    else:
        assert s.get_var("market") == ["P08", "P09", "P10", "P13", "P14", "P21"]   # 7 left
    assert s.phase == "auction"


@pytest.mark.parametrize("step", [1, 2])
def test_step3_card_in_bureaucracy(pg, step):
    s = first_build(pg("central_europe"))
    s.apply("done_building()")
    assert s.current_player == 1
    _deck_ends_in_step3(s, ["P20"], market=["P05", "P06", "P07", "P08", "P09", "P10", "P13", "P14"],
                        owned=[["P03"], ["P04"]], game_step=step)
    s.apply("done_building()")
    # Bureaucracy, Central Europe, Steps 1-2 (L124-125): the highest plant (14) goes under the
    # deck, below the Step 3 card; the draw is the card (L126): the deck (20, 14) is shuffled.
    if step == 1:
        # P4: Step 2 actions first: plant 5 leaves and is replaced by a draw.
        assert [a for a, _ in s.chance_outcomes()] == ["draw_plant(P14)", "draw_plant(P20)"]
        s.apply("draw_plant(P20)")
        # Then plant 6 leaves, no replacement.
        expected = ["P07", "P08", "P09", "P10", "P13", "P20"]
        middle = ["P14"]
    else:
        # The card and the cheapest (5) leave, no replacement.
        expected = ["P06", "P07", "P08", "P09", "P10", "P13"]
        middle = ["P14", "P20"]
    assert s.current_player == 1 and s.phase == "auction"   # round 2: player 1 leads (plant 4)
    assert s.get_var("market") == expected
    assert s.get_var("middle") == middle
    assert s.get_var("game_step") == 3


# ------------------------------------------------------------------------------ bureaucracy

def test_refill_runs_out_of_supply(pg):
    s = first_build(pg("central_europe"))
    s.apply("done_building()")
    # Central Europe, 2 players, Step 1 refill: coal 4, oil 1, garbage 1, uranium 1 (L121).
    s.set_vars({"res_market": {"Coal": 20, "Oil": 18, "Garbage": 6, "Uranium": 5},
                "supply": {"Coal": 2, "Oil": 6, "Garbage": 0, "Uranium": 7}})
    s.apply("done_building()")
    # P18: coal: 4 wanted, 2 in the supply: 20 + 2 = 22, supply 0. Oil 18 + 1. Garbage: the
    # supply is empty, nothing. Uranium 5 + 1.
    assert s.get_var("res_market") == {"Coal": 22, "Oil": 19, "Garbage": 6, "Uranium": 6}
    assert s.get_var("supply") == {"Coal": 0, "Oil": 5, "Garbage": 0, "Uranium": 6}


def test_powering_with_hybrids(pg):
    s = first_build(pg())
    s.apply("done_building()")
    three = ["Groningen", "Leeuwarden", "Enschede"]
    arrange(s, owned=[["P03", "P12"], ["P04"]], fuel=[fuel(1, 3), fuel()],
            network=[three, []], houses=houses((three, 1)))
    s.apply("done_building()")
    # Order [1, 0] (L56): player 1 has no coal for plant 4, so no decision. Player 0: oil plant
    # 3 needs 2 oil (has 3); hybrid 12 needs 2 of coal and oil: 0 coal + 2 oil or 1 + 1 (only 1
    # coal held).
    assert s.current_player == 0 and s.phase == "power"
    assert s.legal_actions() == ["fire(P03, 0)", "fire(P12, 0)", "fire(P12, 1)", "stop_firing()"]
    s.apply("fire(P12, 1)")                      # burns 1 coal + 1 oil: left 0 coal, 2 oil
    assert s.legal_actions() == ["fire(P03, 0)", "stop_firing()"]
    s.apply("fire(P03, 0)")                      # burns 2 oil; nothing left to run
    # L117-118: 2 + 1 = 3 cities, 3 houses: 3 powered, income 44: 47 + 44 = 91.
    assert s.get_var("powered")[0] == 3
    assert s.get_var("cash")[0] == 91
    assert s.get_var("fuel")[0] == fuel()
    # The burned fuel went back to the supply, then the refill took from it (L121): coal supply
    # 6 + 1 - 2 = 5 (Benelux starts 18 on the market), oil 0 + 3 - 0 = 3 (market full).
    assert s.get_var("supply")["Coal"] == 5
    assert s.get_var("supply")["Oil"] == 3
    # Player 1 powered nothing and got the 0 entry: 46 + 10 = 56.
    assert s.get_var("cash")[1] == 56


# ------------------------------------------------------------------------ map-specific rules

def test_benelux_ecological_fifth_plant(pg):
    for variant, offer in (("benelux", ["P03", "P04", "P05", "P06", "P13"]),
                           ("central_europe", ["P03", "P04", "P05", "P06"])):
        s = start(pg(variant), 2)
        arrange(s, market=["P03", "P04", "P05", "P06", "P13", "P14", "P15", "P16"], top=[])
        # L82: on Benelux the 5th plant is on offer too when it is ecological (wind, 13).
        assert s.legal_actions() == [f"open({x})" for x in offer]
    s = start(pg(), 2)
    four = ["open(P03)", "open(P04)", "open(P05)", "open(P06)"]
    # P6: fusion (50) counts as ecological.
    arrange(s, market=["P03", "P04", "P05", "P06", "P50"], top=[])
    assert s.legal_actions() == four + ["open(P50)"]
    # P6: only the 5th is checked: no cascade to the 6th (18).
    arrange(s, market=["P03", "P04", "P05", "P06", "P13", "P18"], top=[])
    assert s.legal_actions() == four + ["open(P13)"]
    # The 5th (7) burns oil: four on offer, though an eco plant (13) is 6th.
    arrange(s, market=["P03", "P04", "P05", "P06", "P07", "P13"], top=[])
    assert s.legal_actions() == four


def test_benelux_end_of_round_market_update(pg):
    s = first_build(pg())
    s.apply("done_building()")
    arrange(s, market=["P05", "P06", "P07", "P08", "P09", "P10", "P13", "P14"],
            top=["P20", "P11"], owned=[["P03"], ["P04"]])
    s.apply("done_building()")
    # L122, L125, P7: the cheapest (5) leaves the game and the highest (14) goes under the deck
    # at the same time; 20 and 11 fill the gaps. (In sequence, 20 would have been the highest
    # sent under instead of 14.)
    assert s.get_var("market") == ["P06", "P07", "P08", "P09", "P10", "P11", "P13", "P20"]
    assert s.get_var("under") == ["P14"]


def test_central_europe_end_of_round_market_update(pg):
    s = first_build(pg("central_europe"))
    s.apply("done_building()")
    arrange(s, market=["P05", "P06", "P07", "P08", "P09", "P10", "P13", "P14"],
            top=["P20", "P11"], owned=[["P03"], ["P04"]])
    s.apply("done_building()")
    # L123, L125: Steps 1-2 on Central Europe: only the highest (14) goes under; 20 replaces it.
    assert s.get_var("market") == ["P05", "P06", "P07", "P08", "P09", "P10", "P13", "P20"]
    assert s.get_var("under") == ["P14"]
    assert s.get_var("top") == ["P11"]


def test_central_europe_nuclear_rule(pg):
    s = start(pg("central_europe"), 2)
    arrange(s, market=["P11", "P12", "P13", "P14", "P15", "P16", "P17", "P18"], top=["P20"])
    # L83, P11: no house in the Czech Republic, Slovakia or Hungary: plant 11 is not offered.
    assert s.legal_actions() == ["open(P12)", "open(P13)", "open(P14)"]
    s.set_vars({"network": [["Bratislava"], []], "houses": houses((["Bratislava"], 1))})
    assert s.legal_actions() == ["open(P11)", "open(P12)", "open(P13)", "open(P14)"]
    s.apply("open(P11)")
    # Round 1, and after this sale every plant on offer is nuclear (17, 23, 28 and 39 from the
    # top of the deck): player 1, with no house that allows them, can open nothing.
    arrange(s, market=["P11", "P17", "P23", "P28", "P34", "P35", "P36", "P37"], top=["P39"])
    s.apply("bid(11)")
    # Player 1 may not bid on plant 11: a forced pass, so player 0 wins at 11 at once.
    assert s.get_var("owned") == [["P11"], []]
    assert s.get_var("cash") == [39, 50]
    assert s.get_var("market") == ["P17", "P23", "P28", "P34", "P35", "P36", "P37", "P39"]
    # P11: no legal opening, so player 1 passes (choose ... else: no decision, no history
    # entry), even in round 1; the auction is over. L94: order by plant: [0, 1]; L54: player 1
    # buys first.
    assert s.get_var("passed") == [1]
    assert s.history[-1] == "bid(11)"
    assert s.get_var("order") == [0, 1]
    assert s.current_player == 1 and s.phase == "buy_resources"


def test_central_europe_wien_discount(pg):
    s = start(pg("central_europe"), 2)
    drive(s, at_phase("buy_resources"))
    assert s.current_player == 0                 # L54: order [1, 0], the last player first
    s.set_vars({"owned": [["P06"], ["P04"]], "network": [["Wien"], []],
                "houses": houses((["Wien"], 1))})
    # Garbage: 6 on the market, so the cheapest is slot 24 - 6 = 18 of the track: 7 Elektro;
    # L100: Wien in the network: 7 - 1 = 6; 47 - 6 = 41.
    s.apply("buy(Garbage)")
    assert s.get_var("cash")[0] == 41
    # P10 (literal): a 1-Elektro garbage (a full track, slot 0) costs 0.
    s.set_vars({"res_market": {"Coal": 24, "Oil": 18, "Garbage": 24, "Uranium": 5}})
    s.apply("buy(Garbage)")
    assert s.get_var("cash")[0] == 41
    assert s.get_var("fuel")[0] == fuel(garbage=2)
    # Plant 6 stores 2 garbage (L66): full.
    assert "buy(Garbage)" not in s.legal_actions()


# -------------------------------------------------------------------------------- the end

@pytest.mark.parametrize(("cash1", "winners"), [(100 - 19, [0]), (100 - 18, [1])])
def test_end_trigger_and_tiebreaks(pg, cash1, winners):
    s = first_build(pg())
    twenty = [c for c in GREEN + BROWN + YELLOW if c != "Middelburg"]
    arrange(s, market=["P30", "P31", "P32", "P33", "P34", "P35", "P36", "P37"],
            owned=[["P18"], ["P22"]], network=[twenty, twenty],
            houses=houses((twenty, 2)), build_limit=2, cash=[100, cash1])
    # The 21st house (L27, L130: 21 with 2 players): Middelburg from Breda 9 (Middelburg-
    # Antwerpen is out of play): 10 + 9 = 19, 100 - 19 = 81.
    s.apply("build(Middelburg)")
    s.apply("done_building()")
    s.apply("done_building()")
    # L132: building ends, then only powering, in order [1, 0]: both run their wind plant (2
    # cities each); with nothing left to run the game ends.
    assert s.current_player == 1 and s.phase == "power"
    s.apply("fire(P22, 0)")
    s.apply("fire(P18, 0)")
    assert s.current_player == TERMINAL
    assert s.get_var("powered") == [2, 2]
    assert s.scores() == [2, 2]
    # L134: tied on cities powered; then the most money (81 each in the first case), then the
    # most cities: player 0 has 21 houses, player 1 20. In the second case player 1 has 82.
    assert s.get_var("cash") == [81, cash1]
    assert s.winners() == winners


# ---------------------------------------------------------------------- data and random games

def test_data_files_are_generated_from_the_json():
    conv = _convert()
    for name, fn in conv.FILES.items():
        with open(os.path.join(DATA, name), encoding="utf-8") as f:
            assert f.read() == fn(), f"{name} is out of date: run convert.py"


def test_places_in_their_own_spelling():
    from rulelang.view import arg_display, display_aliases
    program = rulelang.check_file(PATH)
    city = program.enums["City"]
    shown = dict(zip(city.members, city.display))
    for f in ("map_benelux.json", "map_central_europe.json"):
        with open(os.path.join(DATA, f), encoding="utf-8") as fh:
            for c in json.load(fh)["cities"]:
                # The JSON name without the source's notes in parentheses.
                assert shown[_ident(c["name"])] == c["name"].split(" (")[0]
    assert shown["Lodz"] == "Łódź" and shown["Hertogenbosch"] == "'s-Hertogenbosch"
    # play shows build(Lodz) as Łódź, and reads Łódź typed.
    assert arg_display(program)["build"][0]["Lodz"] == "Łódź"
    assert display_aliases(program)["łódź"] == ("Lodz",)


@pytest.mark.parametrize(("variant", "first", "second"), [
    ("benelux", "pick_area(BnlGreen)", "pick_area(BnlBlue)"),
    ("central_europe", "pick_area(CeGreen)", "pick_area(CeBlue)")])
def test_an_area_is_typed_by_its_colour(variant, first, second):
    """Areas show as "green: Czech Republic"; `green` names the green area of the map in play
    (it was refused: both maps have one)."""
    from rulelang.play import resolve
    from rulelang.view import display_aliases

    s = rulelang.load(PATH, variant=variant).new_game(3)
    while not any(a.startswith("pick_area") for a in s.legal_actions()):
        s.apply_index(0)  # (the first outcome of each draw, the first option of each choice)
    legal = s.legal_actions()
    aliases = display_aliases(rulelang.check_file(PATH, variant=variant))
    assert legal[resolve("green", legal, aliases)] == first
    assert legal[resolve("pick_area BLUE", legal, aliases)] == second


@pytest.mark.parametrize(("variant", "fname", "detours"), [
    ("benelux", "map_benelux.json", {("Antwerpen", "Brugge"): 8}),
    ("central_europe", "map_central_europe.json", {}),
])
def test_loaded_map_matches_the_json(pg, variant, fname, detours):
    s = first_build(pg(variant))
    with open(os.path.join(DATA, fname), encoding="utf-8") as f:
        data = json.load(f)
    ids = {c["name"]: _ident(c["name"]) for c in data["cities"]}
    s.set_vars({"in_play": [c for c in _cities() if c in ids.values()], "cash": [1000, 1000]})
    # Every edge, from a network of its one end: the second house costs 10 + the edge, except
    # where a detour is cheaper (Antwerpen-Brugge 9 against 8 through Gent, data README).
    for e in data["edges"]:
        a, b = ids[e["a"]], ids[e["b"]]
        t = s.clone()
        t.set_vars({"network": [[a], []], "houses": houses(([a], 1))})
        t.apply(f"build({b})")
        cost = detours.get((a, b), detours.get((b, a), e["cost"]))
        assert t.get_var("cash")[0] == 1000 - 10 - cost, (a, b)
    assert len(data["edges"]) == data["counts"]["edges"]


@pytest.mark.parametrize("variant", ["benelux", "central_europe"])
@pytest.mark.parametrize("players", [2, 4, 6])
def test_random_games_finish(load_rules, variant, players):
    from rulelang.sim import play_random_game
    game = load_rules("powergrid", variant=variant)
    result = play_random_game(game, players, 3)
    assert result.decisions > 100


# ------------------------------------------------------------------------------------ the view
# The `view` section (docs/language.md section 18), evaluated from observations as `rulelang
# play`, `serve` and `replay --step` do.

@functools.cache
def _viewer(variant: str):
    from rulelang.viewmodel import Viewer
    return Viewer(rulelang.check_file(PATH, variant=variant, params=FIXED))


def view_of(s, seat, variant: str = "benelux") -> tuple[dict, dict]:
    """The view's tables (title -> rows) and shown values (label -> text) for one seat."""
    items = _viewer(variant).model(s.observation(seat))["items"]
    tables = {i["title"]: i["rows"] for i in items if i["kind"] == "table"}
    shows = {i["label"]: i["text"] for i in items if i["kind"] == "show"}
    return tables, shows


def known_position(pg):
    """Benelux, 2 players, round 1, player 0 to build; order [1, 0]."""
    s = first_build(pg())
    arrange(s, market=["P07", "P10", "P13", "P16", "P18", "P21", "P26", "P30"], top=["P14"],
            under=["P40"], owned=[["P05", "P11"], ["P04"]],
            fuel=[fuel(coal=1, oil=2, uranium=1), fuel(coal=2)],
            res_market={"Coal": 10, "Oil": 24, "Garbage": 1, "Uranium": 0},
            supply={"Coal": 14, "Oil": 0, "Garbage": 23, "Uranium": 12},
            network=[["Amsterdam"], ["Utrecht"]],
            houses=houses((["Amsterdam", "Utrecht"], 1)))
    return s


def test_view_plant_markets(pg):
    s = known_position(pg)
    tables, _ = view_of(s, 0)
    # Columns: min bid, burns, use, powers. L37, L81, P6: the four cheapest are on offer, and
    # on Benelux the 5th too, being ecological (plant 18, wind).
    assert tables["Actual market"] == [
        ["P07", "7", "Oil", "3", "2"],
        ["P10", "10", "Coal", "2", "2"],
        ["P13", "13", "-", "0", "1"],
        ["P16", "16", "Oil", "2", "3"],
        ["P18", "18", "-", "0", "2"],
    ]
    assert tables["Future market"] == [
        ["P21", "21", "Coal, Oil", "2", "4"],            # a hybrid burns coal and oil
        ["P26", "26", "Oil", "2", "5"],
        ["P30", "30", "Garbage", "3", "6"],
    ]
    # Each seat sees its own plants, with what they store (L66: twice the fuel use).
    assert tables["Your plants"] == [
        ["P05", "Coal, Oil", "2", "4", "1"],
        ["P11", "Uranium", "1", "2", "2"],
    ]
    assert view_of(s, 1)[0]["Your plants"] == [["P04", "Coal", "2", "4", "1"]]


def test_view_resources_and_players(pg):
    s = known_position(pg)
    tables, shows = view_of(s, 0)
    # Columns: market, next units, supply, refill. A track of 24 spaces filled from the dearest:
    # 10 coal occupy spaces 14-23, so the next units are spaces 14 (5), 15, 16, 17 (6 each);
    # 24 oil: spaces 0-3, 1, 1, 1, 2; one garbage: space 23 only, 8; no uranium, no price.
    # Refill, Benelux, 2 players, Step 1: 2 coal, 3 oil, 1 garbage, 1 uranium.
    assert tables["Resources"] == [
        ["Coal", "10", "5, 6, 6, 6", "14", "2"],
        ["Oil", "24", "1, 1, 1, 2", "0", "3"],
        ["Garbage", "1", "8", "23", "1"],
        ["Uranium", "0", "", "12", "1"],
    ]
    # Rows in turn order (L94: plant 4 before plant 3 after round 1's auctions); columns cash,
    # cities, plants, fuel (coal, oil, garbage, uranium), auction (empty outside phase 2).
    assert tables["Players (turn order)"] == [
        ["P1", "46", "1", "P04", "2, 0, 0, 0", ""],
        ["P0 (you)", "47", "1", "P05, P11", "1, 2, 0, 1", ""],
    ]
    assert shows["Round, step"] == "1, 1"
    assert shows["Cities for Step 2, for the end"] == "10, 21"          # 2 players
    assert shows["Areas in play"] == ("green: Netherlands north/east, brown: Netherlands west, "
                                      "yellow: Netherlands south")
    assert shows["Next plant drawn"] == "P14"                          # the known top (L25)
    assert shows["Under the deck"] == "P40"                            # L125
    assert shows["P0's cities"] == "Amsterdam" and shows["P1's cities"] == "Utrecht"
    assert "P2's cities" not in shows


def test_view_build_costs_filter_the_cities(pg):
    s = known_position(pg)
    tables, _ = view_of(s, 0)
    # The six cheapest cities player 0 may build in: in play, not Amsterdam (own house), not
    # Utrecht (full in Step 1). From Amsterdam (map_benelux.json): Zaanstad 1, Haarlem 2,
    # Leiden 4, Den Haag via Leiden 4 + 2, Apeldoorn 7 and Den Helder via Zaanstad 1 + 6 (ties
    # in city order, before Rotterdam via Leiden 4 + 3); each plus the "10" slot.
    rows = tables["Your build costs"]
    assert rows == [
        ["Zaanstad", "11", "0"], ["Haarlem", "12", "0"], ["Leiden", "14", "0"],
        ["Den Haag", "16", "0"], ["Apeldoorn", "17", "0"], ["Den Helder", "17", "0"],
    ]
    # Every cost shown is what building there costs.
    ids = {"Den Haag": "DenHaag", "Den Helder": "DenHelder"}
    for name, cost, _houses in rows:
        t = s.clone()
        t.apply(f"build({ids.get(name, name)})")
        assert t.get_var("cash")[0] == 47 - int(cost), name
    # Player 1 (network Utrecht) sees its own costs, Amsterdam full: Leiden 4, Zaanstad via
    # Amsterdam 4 + 1, Rotterdam 5, Apeldoorn 6, Arnhem 6, Haarlem via Amsterdam 4 + 2.
    assert view_of(s, 1)[0]["Your build costs"] == [
        ["Leiden", "14", "0"], ["Zaanstad", "15", "0"], ["Rotterdam", "15", "0"],
        ["Apeldoorn", "16", "0"], ["Arnhem", "16", "0"], ["Haarlem", "16", "0"],
    ]
    # Before a player's first house the table waits for the building phase.
    t = s.clone()
    t.set_vars({"stage": 2, "network": [[], ["Utrecht"]], "houses": houses((["Utrecht"], 1))})
    assert view_of(t, 0)[0]["Your build costs"] == []


def test_view_auction_and_step3_card(pg):
    s = start(pg(), 3)
    s.apply("open(P03)")
    assert view_of(s, 0)[1]["Auction: plant"] == "P03"
    assert "Auction: high bid" not in view_of(s, 0)[1]  # the opening bid is still to come
    s.apply("bid(3)")
    s.apply("bid(4)")
    shows = view_of(s, 2)[1]
    assert [shows["Auction: plant"], shows["Auction: high bid"],
            shows["Auction: high bidder"]] == ["P03", "4", "P1"]
    s.apply("pass_bid()")
    s.apply("pass_bid()")                        # player 1 bought plant 3 for 4
    tables, shows = view_of(s, 0)
    assert not any(label.startswith("Auction") for label in shows)
    assert [r[0] for r in tables["Players (turn order)"]] == ["P0 (you)", "P1", "P2"]
    assert [r[-1] for r in tables["Players (turn order)"]] == ["", "done", ""]
    assert "Step 3 card" not in shows
    s.set_vars({"step3_in_market": True})
    assert view_of(s, 2)[1]["Step 3 card"] == "in the market: Step 3 begins after the auctions"


def test_view_wien_discount_is_per_seat(pg):
    s = start(pg("central_europe"), 2)
    drive(s, at_phase("buy_resources"))
    assert s.current_player == 0
    s.set_vars({"network": [["Wien"], []], "houses": houses((["Wien"], 1)),
                "owned": [["P06"], ["P04"]],
                "res_market": {"Coal": 24, "Oil": 18, "Garbage": 6, "Uranium": 5}})
    rows = {seat: {r[0]: r[2] for r in view_of(s, seat, "central_europe")[0]["Resources"]}
            for seat in (0, 1)}
    # Garbage: 6 units, spaces 18-21 cost 7, 7, 7, 8; L100: 1 less with Wien (player 0).
    assert rows[1]["Garbage"] == "7, 7, 7, 8"
    assert rows[0]["Garbage"] == "6, 6, 6, 7"
    assert rows[0]["Coal"] == rows[1]["Coal"] == "1, 1, 1, 2"
    # Uranium, 5 units (12 spaces): spaces 7-10: 8, 10, 12, 14.
    assert rows[0]["Uranium"] == "8, 10, 12, 14"
    # Buying agrees: the first garbage costs player 0 6; then spaces 19-22: 7, 7, 8, 8, less 1.
    cash = s.get_var("cash")[0]
    s.apply("buy(Garbage)")
    assert s.get_var("cash")[0] == cash - 6
    after = view_of(s, 0, "central_europe")[0]["Resources"]
    assert after[2] == ["Garbage", "5", "6, 6, 7, 7", "18", "1"]


def test_view_labels():
    from rulelang.view import param_labels
    labels = param_labels(_viewer("benelux").program)
    assert labels["bid"] == ["amount"]
    assert labels["open"] == ["plant"]
    assert labels["build"] == ["city"]
    assert labels["fire"] == ["plant", "hybrid coal"]
    assert all(name not in ("a", "b", "c", "r", "x", "y")
               for params in labels.values() for name in params)


_PLANT = re.compile(r"\bP\d\d\b")


@pytest.mark.parametrize("variant", ["benelux", "central_europe"])
def test_view_evaluates_everywhere_and_hides_the_deck(load_rules, variant):
    from rulelang import sim
    game = load_rules("powergrid", variant=variant)
    viewer = _viewer(variant)
    rng = random.Random(3)
    s = game.new_game(3)
    checked = 0
    for i in range(3000):
        if s.is_terminal():
            break
        if s.current_player == CHANCE:
            s.apply_index(sim.pick_chance(rng, s))
        else:
            s.apply_index(rng.randrange(s.num_choices()))
        if i % 40:
            continue
        hidden = set(s.get_var("middle"))
        spectator = json.loads(s.to_json())
        spectator["player"] = None
        for seat in (0, 1, 2, None):
            model = viewer.model(s.observation(seat) if seat is not None else spectator, seat)
            text = json.dumps(model, ensure_ascii=False)
            # "?" is what a failed expression shows
            assert '"?"' not in text, (seat, text)
            # No plant of the hidden middle of the deck is named anywhere (L20-25).
            assert not set(_PLANT.findall(text)) & hidden, (seat, hidden)
        # The view depends on the observation only: with the plants that left the game unseen
        # as the middle instead, the view is the same.
        t = s.clone()
        out = (set(viewer.program.enums["Plant"].members) - hidden - set(s.get_var("market"))
               - set(s.get_var("top")) - set(s.get_var("under"))
               - {x for o in s.get_var("owned") for x in o})
        t.set_vars({"middle": sorted(out)})
        assert viewer.model(t.observation(0)) == viewer.model(s.observation(0))
        checked += 1
    assert checked > 10
