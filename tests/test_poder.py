"""O Jogo do Poder (rules/poder.rules): the book's worked examples and rule scenarios.

"Lnn" = line nn of the seed 000_f02096e26ee94fc7.txt. Company data not printed in the book is
reconstructed (see the DATA section of the rules file); a test that depends on it says so.
Positions are built with set_vars: the hands, the board offers and the pile are emptied unless a
test needs them, so that every other player can only skip and the scenario stays scripted.
"""

from __future__ import annotations

import json
import random

import pytest

import rulelang

N = 4
FREE = ("X01D", "X10D", "X05A", "X09A")  # price-10 companies away from the examples' blocks

def start(load_rules, variant=None, params=None, free=FREE, **position):
    """A 4-player game just after setup (player 0 to act in year 1), then `position` applied on
    top of a quiet table: no hand cards, no public offers, an empty pile."""
    s = load_rules("poder", variant=variant, params=params).new_game(N)
    for f in free:
        s.apply(f"free_company({f})")
    while s.current_player == rulelang.CHANCE:
        s.apply_index(0)
    base = {"hand": [[] for _ in range(N)], "offers": [], "pile": []}
    base.update(position)
    s.set_vars(base)
    return s


def put(s, name, p, value):
    """Set player p's entry of a per-player state variable."""
    arr = s.get_var(name)
    arr[p] = value
    s.set_vars({name: arr})


def play(s, *actions):
    for a in actions:
        s.apply(a)


def skip_others(s):
    """Let every player who can only skip do so, up to the end of the current year."""
    year = var(s, "year")
    while var(s, "year") == year and s.current_player >= 0 and s.legal_actions() == ["skip()"]:
        s.apply("skip()")


def var(s, name, p=None):
    v = s.get_var(name)
    return v if p is None else v[p]


# ---------------------------------------------------------------------------- the book's examples

def test_example_1_americair(load_rules):
    # L81-L88: AMERICAIR 100 . 12 -- price 100 paid, power 12 recorded.
    s = start(load_rules, cash=[100, 10, 10, 10])
    put(s, "hand", 0, ["AMERICAIR"])
    play(s, "buy(AMERICAIR)")
    assert "pay(0, false)" in s.legal_actions()
    play(s, "pay(0, false)")
    assert var(s, "cash", 0) == 0
    assert var(s, "increase", 0) == 12
    assert "AMERICAIR" in var(s, "owned", 0)


def test_example_2_block_of_four(load_rules):
    # L100-L141: owning MUNIAR, buy BONN KG (12 + 3 = 15), COMET (2 + 2 = 4), then KUMPER
    # (2 + 1 + 2 + circle 5 = 10). One purchase per year, others skipping.
    s = start(load_rules, cash=[500, 10, 10, 10], power=[1, 1, 1, 2],
              owned=[["MUNIAR"], ["X10D"], ["X05A"], ["X09A"]])
    put(s, "hand", 0, ["BONN_KG", "COMET", "KUMPER"])
    gains = []
    for c in ("BONN_KG", "COMET", "KUMPER"):
        play(s, f"buy({c})", "pay(0, false)")
        gains.append(var(s, "increase", 0))
        skip_others(s)
    assert gains == [15, 4, 10]
    # The whole block: 1 + 15 + 4 + 10 = 30 = printed powers 17 + edges 8 + circle 5.
    assert var(s, "power", 0) == 30
    assert var(s, "gained")["KUMPER"] == 10


def test_example_3_bonuses_and_financed_square(load_rules):
    # L396-L410: owning B. POWER INC and S. P. GARNIER, MOSKVA AEROPLAN bought with UEP and change
    # in cash gives 8 + 4 + 4 = 16. Later NUCLEARES (read as NUCLEARMS, 250 . 28) with a bond
    # completes the square: 14 + (8 + 5) + 8 = 35 for that year. The prices of B. POWER and
    # S. P. GARNIER and the values after year 1 come from reconstructed data.
    s = start(load_rules, cash=[0, 10, 10, 10], power=[16, 1, 1, 2], value=[40, 10, 10, 10],
              owned=[["B_POWER_INC", "SP_GARNIER"], ["X10D"], ["X05A"], ["X09A"]])
    put(s, "hand", 0, ["MOSKVA_AEROPLAN", "NUCLEARMS"])
    play(s, "buy(MOSKVA_AEROPLAN)")
    # 2 UEP (80) leave 20 to pay in cash, which he lacks; 3 UEP (120) pay with 20 change.
    assert "pay(2, false)" not in s.legal_actions()
    play(s, "pay(3, false)")
    assert (var(s, "uep", 0), var(s, "cash", 0)) == (6, 20)
    assert var(s, "increase", 0) == 16
    skip_others(s)
    assert var(s, "power", 0) == 32
    assert var(s, "value", 0) == 80  # reconstructed row 31-35
    play(s, "buy(NUCLEARMS)", "pay(2, true)")  # bond 125 + 2 UEP (160): 35 change
    assert var(s, "increase", 0) == 35
    assert var(s, "bonds", 0)["B125"] == 1
    assert var(s, "cash", 0) == 20 + 32 + 35


def test_example_4_track(load_rules):
    # L421-L425, L159-L183: power 19 (row 16-20, value 40); two companies in one round, increases
    # 3 and 4: total 26, row 26-30, value 60. Digest B8: the second one is a tender win.
    s = start(load_rules, cash=[100, 100, 10, 10], power=[19, 1, 1, 2], value=[40, 10, 10, 10],
              owned=[["X13A"], ["X10D"], ["X05A"], ["X09A"]], offers=["X07A"])
    put(s, "hand", 0, ["X04C"])  # reconstructed 20 . 3
    play(s, "buy(X04C)", "pay(0, false)")
    assert var(s, "increase", 0) == 3
    play(s, "tender(X07A)")  # player 1 opens a tender on X07A (reconstructed 40 . 4)
    play(s, "no_bid()", "no_bid()", "bid(40)", "no_bid()")  # from the opener's left: 2, 3, 0, 1
    play(s, "pay(0, false)")
    assert var(s, "increase", 0) == 7
    skip_others(s)
    assert var(s, "power", 0) == 26
    assert var(s, "value", 0) == 60
    assert var(s, "cash", 0) == 100 - 20 - 40 + 26  # income: 1 per point of the new total


def test_payment_example_uep_and_cash(load_rules):
    # L351-L356: MOSKVA AEROPLAN (100) from hand, UEP value 40: 2 UEP + 20 cash.
    s = start(load_rules, cash=[20, 10, 10, 10], value=[40, 10, 10, 10])
    put(s, "hand", 0, ["MOSKVA_AEROPLAN"])
    play(s, "buy(MOSKVA_AEROPLAN)")
    legal = s.legal_actions()
    assert "pay(2, false)" in legal and "pay(3, false)" in legal  # 3 UEP: change of 20
    assert "pay(4, false)" not in legal  # the 4th UEP would not be needed at all
    play(s, "pay(2, false)")
    assert (var(s, "uep", 0), var(s, "cash", 0)) == (7, 0)


def test_payment_example_bond_in_tender(load_rules):
    # L357-L366: NUCLEARMS won in a tender for 280, UEP value 100: bond 125 (half the PRINTED
    # 250, not of the bid) + 1 UEP (100) + 55 cash; the printed power counts at half.
    s = start(load_rules, cash=[55, 10, 10, 10], value=[100, 10, 10, 10], offers=["NUCLEARMS"])
    play(s, "tender(NUCLEARMS)", "no_bid()", "no_bid()", "no_bid()", "bid(280)")
    assert var(s, "revealed") == [280, 0, 0, 0]
    assert "pay(1, false)" not in s.legal_actions()  # 180 in cash is more than he has
    play(s, "pay(1, true)")
    assert (var(s, "cash", 0), var(s, "uep", 0)) == (0, 8)
    assert var(s, "bonds", 0)["B125"] == 1 and var(s, "bank_bonds")["B125"] == 2
    assert var(s, "increase", 0) == 14
    assert "NUCLEARMS" in var(s, "owned", 0) and var(s, "offers") == []


def test_final_score_example(load_rules):
    # L191-L209: 55 + 700 + 300 - 195 = 860. Under the total-power income (L419-L420) the sheet
    # cannot come from the base game: after a year-10 income of 70 the cash would have been -15
    # before it. It does come from the advanced buy-back (L12-L18), replayed here: power 62 + 8
    # this year = 70, cash 135 + 70 - 150 (one UEP bought back at the old value) = 55, 2 UEP at
    # the reconstructed value 150 of row 61-70, bonds of face 100 and 30 (liquidation 150 + 45,
    # reconstructed). The book's sheet itself is only illustrative.
    bonds = [{b: 0 for b in ("B10", "B15", "B20", "B25", "B30", "B40", "B50", "B75", "B100",
                             "B125")} for _ in range(N)]
    bonds[0].update({"B100": 1, "B30": 1})
    s = start(load_rules, variant="advanced", year=10, power=[62, 1, 1, 2],
              value=[150, 10, 10, 10], increase=[8, 0, 0, 0], cash=[135, 0, 0, 0],
              uep=[1, 9, 9, 9], bonds=bonds)
    for _ in range(N):
        play(s, "end_trading()", "skip()")
    play(s, "buy_back()")
    assert s.is_terminal()
    assert (var(s, "cash", 0), var(s, "power", 0), var(s, "uep", 0), var(s, "value", 0)) == (
        55, 70, 2, 150)
    assert s.scores()[0] == 55 + 700 + 300 - 195 == 860


# ---------------------------------------------------------------------------- rule scenarios

def test_tender_tie_and_rebid(load_rules):
    # L269-L270: tied bidders bid again, higher, until the tie breaks; L277-L281: the opener then
    # draws 1 and discards 1 face up.
    s = start(load_rules, cash=[100, 100, 100, 100], offers=["X03A"], pile=["X13C", "X12C"])
    put(s, "hand", 0, ["X04A", "X08A", "X12A"])
    play(s, "tender(X03A)", "bid(50)", "bid(50)", "no_bid()", "bid(30)")
    assert var(s, "revealed") == [30, 50, 50, 0]
    assert s.current_player == 1
    assert "rebid(50)" not in s.legal_actions() and "rebid(51)" in s.legal_actions()
    play(s, "rebid(60)", "rebid(60)")  # tied again
    assert s.current_player == 1
    play(s, "rebid(65)", "rebid(70)")
    assert s.current_player == 2 and var(s, "revealed") == [30, 65, 70, 0]
    play(s, "pay(0, false)")
    assert var(s, "cash", 2) == 30 and "X03A" in var(s, "owned", 2)
    assert s.current_player == rulelang.CHANCE  # the opener's draw
    play(s, "draw(X13C)", "discard(X08A)")
    assert sorted(var(s, "hand", 0)) == ["X04A", "X12A", "X13C"]
    assert var(s, "offers") == ["X08A"]


def test_tender_without_bids(load_rules):
    # Digest B3: nobody bids, the card stays face up; the opener still draws and discards.
    s = start(load_rules, offers=["X03A"], pile=["X13C", "X12C"])
    put(s, "hand", 0, ["X04A"])
    play(s, "tender(X03A)", "no_bid()", "no_bid()", "no_bid()", "no_bid()")
    assert s.current_player == rulelang.CHANCE
    play(s, "draw(X12C)", "discard(X04A)")
    assert var(s, "offers") == ["X03A", "X04A"]
    assert var(s, "cash") == [10, 10, 10, 10]
    assert all(len(o) == 1 for o in var(s, "owned"))


def test_bond_needs_one_in_the_bank(load_rules):
    # L327-L333: only if the bank holds a bond of exactly half the printed price; L323-L326: none
    # for price-10 companies.
    s = start(load_rules, cash=[100, 10, 10, 10])
    put(s, "hand", 0, ["MOSKVA_AEROPLAN", "X03C"])
    banks = var(s, "bank_bonds")
    s.set_vars({"bank_bonds": {**banks, "B50": 0}})
    play(s, "buy(MOSKVA_AEROPLAN)")
    assert not any(a.endswith("true)") for a in s.legal_actions())
    s.set_vars({"bank_bonds": {**banks, "B50": 1}})
    assert "pay(0, true)" in s.legal_actions()
    play(s, "pay(0, true)")
    assert var(s, "bank_bonds")["B50"] == 0 and var(s, "increase", 0) == 4  # 8 halved
    skip_others(s)
    play(s, "buy(X03C)")
    assert not any(a.endswith("true)") for a in s.legal_actions())


def test_must_pay_when_possible(load_rules):
    # L376-L378: he pays if at all possible, even selling more UEP than he wanted: with no cash
    # and 9 UEP at 10, a 100 company can only be paid with the bond and 5 UEP.
    s = start(load_rules, cash=[0, 10, 10, 10])
    put(s, "hand", 0, ["BONN_KG"])
    play(s, "buy(BONN_KG)")
    assert s.legal_actions() == ["pay(5, true)"]


def test_unpayable_purchase_penalty(load_rules):
    # L367-L376: the card goes face up onto its space, a replacement is drawn, and no point is
    # recorded this year, not even those already made (digest B5: the whole year).
    s = start(load_rules, cash=[0, 10, 10, 10], uep=[0, 9, 9, 9], pile=["X12C"],
              increase=[7, 0, 0, 0], power=[5, 1, 1, 2],
              owned=[["X13A", "X13B"], ["X10D"], ["X05A"], ["X09A"]],
              this_year=[["X13B"], [], [], []])
    s.set_vars({"gained": {**var(s, "gained"), "X13B": 7}})
    put(s, "hand", 0, ["AMERICAIR"])
    play(s, "buy(AMERICAIR)")
    assert s.current_player == rulelang.CHANCE  # no way to pay: straight to the replacement
    play(s, "draw(X12C)")
    assert var(s, "offers") == ["AMERICAIR"]
    assert var(s, "hand", 0) == ["X12C"]
    assert var(s, "increase", 0) == 0 and var(s, "penalized", 0)
    assert var(s, "gained")["X13B"] == 0
    s.set_vars({"offers": []})  # so that the others can only skip
    skip_others(s)
    assert var(s, "power", 0) == 5 and var(s, "cash", 0) == 5


def test_eleventh_company_ends_play(load_rules):
    # L211-L220 (digest B2, parameter max_companies = 11 with the free company): no more turns, the
    # hand goes into the pile at once, no draw; he still records power and receives income.
    ten = ["X01D", "X02D", "X03D", "X04D", "X05D", "X06D", "X07D", "X08D", "X09D", "X10D"]
    s = start(load_rules, cash=[100, 10, 10, 10], power=[40, 1, 1, 2],
              owned=[ten, ["MUNIAR"], ["X05A"], ["X09A"]], pile=["X13C", "X12C"])
    put(s, "hand", 0, ["X04A", "X08A"])
    play(s, "buy(X04A)", "pay(0, false)")
    assert var(s, "done", 0) and var(s, "hand", 0) == []
    assert sorted(var(s, "pile")) == ["X08A", "X12C", "X13C"]
    assert s.current_player == 1  # no draw for player 0
    play(s, "pass()", "draw(X08A)", "draw(X12C)", "discard(X08A)", "discard(X12C)")
    s.set_vars({"offers": []})
    skip_others(s)
    assert var(s, "year") == 2 and s.current_player == 1  # player 0 is skipped from now on
    assert var(s, "power", 0) == 42 and var(s, "cash", 0) == 80 + 42
    # The alternative reading: 11 purchases plus the free card.
    s = start(load_rules, params={"max_companies": 12}, cash=[100, 10, 10, 10],
              owned=[ten, ["MUNIAR"], ["X05A"], ["X09A"]])
    put(s, "hand", 0, ["X04A"])
    play(s, "buy(X04A)", "pay(0, false)")
    assert not var(s, "done", 0)


def test_empty_pile(load_rules):
    # L222-L228: no passing or discarding, no new cards; an empty hand buys only by tender.
    s = start(load_rules, cash=[100, 100, 10, 10], offers=["X03A"])
    put(s, "hand", 0, ["X04A"])
    assert s.legal_actions() == ["buy(X04A)", "tender(X03A)"]
    play(s, "buy(X04A)", "pay(0, false)")
    assert var(s, "hand", 0) == []  # nothing drawn
    assert s.legal_actions() == ["tender(X03A)"]  # player 1: empty hand, tender only
    play(s, "tender(X03A)", "no_bid()", "no_bid()", "no_bid()", "bid(30)")
    play(s, "pay(0, false)")
    assert s.current_player == 2  # the opener neither draws nor discards
    assert s.legal_actions() == ["skip()"]


def test_sealed_bids_are_secret_until_revealed(load_rules):
    s = start(load_rules, offers=["X03A"])
    play(s, "tender(X03A)", "bid(17)")
    for viewer in (0, 2, 3):
        obs = s.observation(viewer)
        assert obs["history"][-1] == "?"
        assert obs["vars"]["bids"][1] is None
        assert obs["vars"]["revealed"] == [0, 0, 0, 0]
        assert "17" not in json.dumps([obs["vars"], obs["history"]])
    assert s.observation(1)["history"][-1] == "bid(17)"
    assert json.loads(s.to_json())["vars"]["bids"][1] == 17  # the full (referee's) state has it
    assert s.observation(1)["vars"]["bids"][1] == 17
    play(s, "bid(12)", "no_bid()", "no_bid()")  # players 2, 3, 0
    for viewer in range(N):
        obs = s.observation(viewer)
        assert obs["vars"]["revealed"] == [0, 17, 12, 0]  # shown together (L265-L268)
        assert "pile" not in obs["vars"]
        hands = obs["vars"]["hand"]
        assert all(h is None for q, h in enumerate(hands) if q != viewer)
    # Face-down deals: the others see "?" in place of the card.
    assert s.observation(1)["history"][N] == "?"
    assert s.observation(0)["history"][N].startswith("deal(")


# ---------------------------------------------------------------------------- advanced rules

def test_advanced_uep_buy_back(load_rules):
    # L12-L18: after the income, before the track moves, one sold UEP back at the old value.
    s = start(load_rules, variant="advanced", uep=[5, 9, 9, 9], cash=[30, 0, 0, 0],
              power=[19, 1, 1, 2], value=[40, 10, 10, 10], increase=[7, 0, 0, 0])
    for _ in range(N):
        play(s, "end_trading()", "skip()")
    assert s.legal_actions() == ["buy_back()", "no_buy_back()"]
    play(s, "buy_back()")
    assert var(s, "uep", 0) == 6 and var(s, "cash", 0) == 30 + 26 - 40
    assert var(s, "value", 0) == 60


def test_advanced_raise_capital_and_defensive_discard(load_rules):
    # L19-L28: on a pass, after the draw and before discarding, a bond of face at most the UEP
    # value plus as much cash. L29-L33: one discard face down, out of the game, unseen.
    s = start(load_rules, variant="advanced", value=[30, 10, 10, 10], pile=["X13C", "X12C"])
    put(s, "hand", 0, ["X04A", "X08A", "X12A"])
    play(s, "end_trading()", "pass()", "draw(X13C)", "draw(X12C)")
    legal = s.legal_actions()
    assert "take_bond(B30)" in legal and "take_bond(B40)" not in legal and "no_bond()" in legal
    play(s, "take_bond(B25)")
    assert var(s, "cash", 0) == 35 and var(s, "bonds", 0)["B25"] == 1
    play(s, "discard_face_down()", "bury(X12C)")
    assert "discard_face_down()" not in s.legal_actions()
    play(s, "discard(X08A)")
    assert var(s, "offers") == ["X08A"] and var(s, "out_of_game") == ["X12C"]
    assert sorted(var(s, "hand", 0)) == ["X04A", "X12A", "X13C"]
    obs = s.observation(1)
    assert "out_of_game" not in obs["vars"] and "bury(X12C)" not in obs["history"]
    assert s.observation(0)["history"].count("bury(X12C)") == 1


def test_advanced_card_trading(load_rules):
    # L34-L46: swaps with money; nobody above 3 cards after the session; bounded offers.
    s = start(load_rules, variant="advanced", cash=[50, 50, 50, 50])
    put(s, "hand", 0, ["X04A", "X08A", "X12A"])
    put(s, "hand", 1, ["X03A", "X07A"])
    put(s, "hand", 2, ["X13C", "X12C", "X11C"])
    legal = s.legal_actions()
    assert "offer_swap(1, X04A, -50)" in legal and "offer_swap(1, X04A, 55)" not in legal
    assert "offer_sale(2, X04A, 5)" not in legal  # player 2 already holds 3 cards
    assert "offer_purchase(1, 5)" not in legal  # player 0 already holds 3 cards
    play(s, "offer_swap(1, X04A, 10)")
    assert s.current_player == 1
    play(s, "accept(X07A)")
    assert sorted(var(s, "hand", 0)) == ["X07A", "X08A", "X12A"]
    assert sorted(var(s, "hand", 1)) == ["X03A", "X04A"]
    assert var(s, "cash")[:2] == [40, 60]
    play(s, "offer_sale(1, X08A, 20)", "decline()")
    play(s, "offer_sale(1, X08A, 15)", "accept_sale()")
    assert len(var(s, "hand", 1)) == 3 and var(s, "cash")[:2] == [55, 45]
    # max_offers = 3: the session is over, the turn's options follow.
    assert "end_trading()" not in s.legal_actions()
    assert "buy(X07A)" in s.legal_actions()


# ---------------------------------------------------------------------------- whole games

def _check_conservation(s):
    v = json.loads(s.to_json())["vars"]
    places = [c for h in v["hand"] for c in h] + [c for o in v["owned"] for c in o]
    places += v["pile"] + v["offers"] + v["out_of_game"]
    places += [v["on_table"]] if v["on_table"] else []
    assert len(places) == len(set(places)) == 52
    for b, left in v["bank_bonds"].items():
        assert left + sum(held[b] for held in v["bonds"]) == 3
    # Only the player in the middle of a pass or a tender discard holds more than 3 cards.
    assert all(len(h) <= 3 for q, h in enumerate(v["hand"]) if q != s.current_player)


@pytest.mark.parametrize("variant", [None, "advanced"])
def test_random_game_terminates(load_rules, variant):
    # Smaller action domains keep the random game fast; the rules are the same.
    game = load_rules("poder", variant=variant,
                      params={"max_bid": 40, "trade_cash": 10, "max_offers": 1})
    rng = random.Random(7)
    s = game.new_game(N)
    steps = 0
    while not s.is_terminal():
        s.apply_index(rng.randrange(s.num_choices()))
        steps += 1
        if s.phase == "turn":
            _check_conservation(s)
        assert steps < 5000
    assert var(s, "year") == 10
    scores = s.scores()
    assert len(scores) == N and all(isinstance(x, int) for x in scores)
    assert s.winners()


def test_income_reading_switch(load_rules):
    # B6: 1 million per point of the new total power (decision), or per point of the year's
    # increase (income_on_increase). The same year as test_example_4_track.
    for params, income in (({}, 26), ({"income_on_increase": True}, 7)):
        s = start(load_rules, params=params, cash=[100, 100, 10, 10], power=[19, 1, 1, 2],
                  value=[40, 10, 10, 10], owned=[["X13A"], ["X10D"], ["X05A"], ["X09A"]],
                  offers=["X07A"])
        put(s, "hand", 0, ["X04C"])
        play(s, "buy(X04C)", "pay(0, false)", "tender(X07A)")
        play(s, "no_bid()", "no_bid()", "bid(40)", "no_bid()", "pay(0, false)")
        skip_others(s)
        assert var(s, "power", 0) == 26
        assert var(s, "cash", 0) == 100 - 20 - 40 + income


def test_forced_default_reading_switch(load_rules):
    # No pile, no face-up offer, and only a card he cannot pay for: the decision makes him buy
    # it and take the penalty; skip_unaffordable lets him skip.
    for params, legal in (({}, ["buy(AMERICAIR)"]),
                          ({"skip_unaffordable": True}, ["buy(AMERICAIR)", "skip()"])):
        s = start(load_rules, params=params, cash=[0, 10, 10, 10], uep=[0, 9, 9, 9])
        put(s, "hand", 0, ["AMERICAIR"])
        assert s.legal_actions() == legal
    # An affordable card still has to be bought (or tendered) rather than skipped.
    s = start(load_rules, params={"skip_unaffordable": True}, cash=[100, 10, 10, 10])
    put(s, "hand", 0, ["X04A"])
    assert s.legal_actions() == ["buy(X04A)"]
