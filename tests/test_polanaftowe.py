"""Pola Naftowe: the book's round-1 example, rule scenarios and secrecy, on every back end."""

from __future__ import annotations

import random

import pytest

import rulelang

# Seats of the book's example (L216-260): Marcin, then Krzysiek on his left, Ania, Piotrek.
M, K, A, P = 0, 1, 2, 3
FIELDS = ["PersianGulf", "Texas", "NorthSea", "IndianOcean", "Venezuela", "Nigeria", "Siberia",
          "Alaska"]
# Well upkeep of the three fields the example derives (digest section 11).
WELL_UPKEEP = {"PersianGulf": 200, "Texas": 300, "NorthSea": 500}
EXAMPLE_FIELDS = ["draw_field(PersianGulf)", "draw_field(Texas)", "draw_field(NorthSea)",
                  "draw_field(IndianOcean)"]


_GAMES: dict[tuple, object] = {}


@pytest.fixture
def pola(load_rules, backend):
    """pola(**params) -> the loaded game, cached per back end and parameters (loading is the
    slow part of these tests)."""

    def _get(**params):
        key = (backend, tuple(sorted(params.items())))
        if key not in _GAMES:
            _GAMES[key] = load_rules("polanaftowe", params=params or None)
        return _GAMES[key]

    return _get


def play(s, *actions: str) -> None:
    for a in actions:
        s.apply(a)


def cash(s) -> list[int]:
    return s.get_var("cash")


def barrels(s) -> list[int]:
    return s.get_var("barrels")


def upkeep(s, p: int) -> int:
    """The cost-table marker (L41-45): 200 per tanker plus each well's field upkeep."""
    wells = s.get_var("wells")[p]
    return 200 * s.get_var("tankers")[p] + sum(n * WELL_UPKEEP[f] for f, n in wells.items() if n)


def wells_row(**counts: int) -> dict[str, int]:
    return {f: counts.get(f, 0) for f in FIELDS}


# ------------------------------------------------------------------ the book's round 1
def example_to_exchange(s) -> None:
    """Round 1 of the example (L216-283) up to the first exchange declaration."""
    play(s, *EXAMPLE_FIELDS)
    assert s.get_var("tankers_left") == 16 and s.get_var("refineries_left") == 9  # L219-220
    assert cash(s) == [3000] * 4 and [upkeep(s, p) for p in range(4)] == [200] * 4  # L221-225
    # L228-233: sealed amounts 300 / 200 / 300 / 100, everybody pays, a die breaks M/A.
    play(s, "lobby(300)", "lobby(200)", "lobby(300)", "lobby(100)")
    assert cash(s) == [2700, 2800, 2700, 2900]
    assert s.get_var("lobbied") == [300, 200, 300, 100]
    assert s.current_player == rulelang.CHANCE
    play(s, "tie_die(6)", "tie_die(3)")
    assert s.get_var("leader") == M
    # L235-236: demand dice 1, 4, 2, 6.
    play(s, "demand_die(1)", "demand_die(4)", "demand_die(2)", "demand_die(6)")
    assert s.get_var("demand") == 13
    # L238-241: event 5, +1 barrel per well this round; Marcin names Krzysiek to ignore it.
    play(s, "event_roll(5)")
    assert s.get_var("event") == "Boom"
    play(s, f"exempt_player({K})")
    # L243-252: the purchases and the upkeep markers 1000 / 1000 / 600 / 1100.
    play(s, "buy_well(Texas)", "buy_well(Texas)", "buy_tanker()", "buy_refinery()",
         "done_building()")
    assert cash(s)[M] == 3000 - 300 - 1600 and upkeep(s, M) == 1000
    play(s, "buy_well(Texas)", "buy_well(Texas)", "buy_tanker()", "buy_refinery()",
         "done_building()")
    play(s, "buy_well(PersianGulf)", "buy_well(PersianGulf)", "buy_refinery()",
         "done_building()")
    play(s, "buy_well(PersianGulf)", "buy_well(NorthSea)", "buy_tanker()", "done_building()")
    assert cash(s) == [1100, 1200, 1600, 1800]
    assert [upkeep(s, p) for p in range(4)] == [1000, 1000, 600, 1100]
    # L253-261: a tanker; M passes, K 100, A passes, P 200, K passes; P pays 200.
    play(s, "put_up(Tanker)", "pass_bid()", "bid(100)", "pass_bid()")
    assert s.get_var("high_bid") == 100 and s.get_var("high_bidder") == K
    play(s, "bid(200)", "pass_bid()")
    assert s.get_var("tankers") == [2, 2, 1, 3] and upkeep(s, P) == 1300
    assert s.get_var("tankers_left") == 16 - 4
    # Extraction follows at once (no decision in it). L264-272: 10 / 8 (exempt) / 8, of which
    # 3 are lost at 100 each (1600 - 300) / 12; Piotrek paid 1800 - 200 for the tanker.
    assert barrels(s) == [10, 8, 5, 12]
    assert cash(s) == [1100, 1200, 1600 - 300, 1800 - 200]
    # L273-275: the three refineries get 3 barrels each.
    assert s.current_player == M and "deliver(3)" in s.legal_actions()
    play(s, "deliver(3)", "deliver(3)", "deliver(3)")
    # L276-283: fees 1000 / 1000 / 600 / 1300 leave 100 / 200 / 700 / 300.
    assert cash(s) == [100, 200, 700, 300]
    assert barrels(s) == [7, 5, 2, 12]                                      # L285-286
    assert s.get_var("supply") == 80 - 26


def test_round_one_example(pola):
    s = pola().new_game(4)
    example_to_exchange(s)
    # Session I (L287-299): 5 / 4 / 0 / 7, Marcin adds his 2 tankers' worth: S = 18 > D = 13.
    play(s, "declare(5)", "declare(4)", "declare(0)", "declare(7)")
    assert s.current_player == M
    assert s.legal_actions() == ["add_barrels()", "withdraw_barrels()", "keep_declaration()"]
    play(s, "add_barrels()")
    assert s.get_var("declared") == [7, 4, 0, 7]
    # L293-295: Marcin settles the 7 / 7 tie in his own favour.
    assert s.legal_actions() == [f"sell_first({M})", f"sell_first({P})"]
    play(s, f"sell_first({M})")
    # 7 x 300 = 2100; 6 x 300 + 100 = 1900; 4 x 100 = 400.
    assert cash(s) == [100 + 2100, 200 + 400, 700, 300 + 1900]
    assert barrels(s) == [0, 1, 2, 5]
    # Session II (L300-303) as printed: 0 / 1 / 3 / 7. Ania holds 2 and Piotrek 5, so the
    # engine refuses 3 and 7 (L175: barrels he holds; digest section 10, contradictions 1-2).
    play(s, "declare(0)", "declare(1)")
    assert s.current_player == A
    assert "declare(3)" not in s.legal_actions()
    before = s.digest()
    with pytest.raises(rulelang.IllegalAction):
        s.apply("declare(3)")
    assert s.digest() == before
    play(s, "declare(2)")
    assert s.current_player == P and "declare(7)" not in s.legal_actions()
    before = s.digest()
    with pytest.raises(rulelang.IllegalAction):
        s.apply("declare(7)")
    assert s.digest() == before
    play(s, "declare(5)")
    # The legal reading: S = 8 <= 13, 300 each; privilege 4 is spent; then 800 per refinery.
    # Book: 3000 / 1700 / 2400 / 4300; corrected: 3000 / 1700 / 2100 / 3700 (digest s. 10).
    assert cash(s) == [3000, 1700, 2100, 3700]
    assert barrels(s) == [0, 0, 0, 0] and s.get_var("supply") == 80
    assert s.get_var("round") == 2 and s.phase == "lobbying" and s.current_player == M


# ------------------------------------------------------------------ helpers for scenarios
def quiet_round_one(s) -> None:
    """Everyone lobbies 100 and player 0 wins the tie on the dice; the event is the quiet 7.
    Ends at player 0's first infrastructure decision."""
    n = s.num_players
    play(s, *[f"draw_field({f})" for f in FIELDS[:n]])
    play(s, *["lobby(100)"] * n)
    play(s, "tie_die(6)", *["tie_die(1)"] * (n - 1))
    play(s, *["demand_die(3)"] * n, "event_roll(7)")


def to_auction(s) -> None:
    """From the infrastructure phase: nobody builds."""
    play(s, *["done_building()"] * s.num_players)


# ------------------------------------------------------------------ lobbying ties
def test_round_one_tie_rolls_until_one_is_highest(pola):
    s = pola().new_game(3)
    play(s, "draw_field(Texas)", "draw_field(NorthSea)", "draw_field(PersianGulf)")
    play(s, "lobby(200)", "lobby(200)", "lobby(200)")
    assert cash(s) == [2800] * 3
    # All three roll; 0 and 1 tie at 5 and roll again; 1 wins (L83-84).
    play(s, "tie_die(5)", "tie_die(5)", "tie_die(2)")
    assert s.current_player == rulelang.CHANCE and s.get_var("leader") is None
    play(s, "tie_die(3)", "tie_die(4)")
    assert s.get_var("leader") == 1
    assert s.chance_outcomes()[0][0] == "demand_die(1)"


def test_later_round_tie_settled_by_previous_winner(pola):
    s = pola().new_game(4)
    example_to_exchange(s)
    play(s, "declare(0)", "declare(0)", "declare(0)", "declare(0)", "keep_declaration()")
    play(s, "declare(0)", "declare(0)", "declare(0)", "declare(0)", "keep_declaration()")
    assert s.get_var("round") == 2 and s.current_player == M
    # Round 2: K and A tie at 200; Marcin, last round's winner, decides (L78, Q2).
    play(s, "lobby(100)", "lobby(200)", "lobby(200)", "lobby(100)")
    assert s.current_player == M
    assert s.legal_actions() == [f"lobby_tie({K})", f"lobby_tie({A})"]
    play(s, f"lobby_tie({A})")
    assert s.get_var("leader") == A
    assert s.current_player == rulelang.CHANCE
    # Acting order now starts at Ania (L74-75): her die is the first demand die.
    play(s, *["demand_die(2)"] * 4, "event_roll(9)")
    assert s.current_player == A
    assert f"exempt_player({A})" in s.legal_actions()


def test_later_round_tie_rolls_when_previous_winner_is_out(pola):
    s = pola().new_game(4)
    quiet_round_one(s)
    assert s.get_var("leader") == 0
    to_auction(s)
    # Player 0, this round's winner, cannot pay his fee of 200 and is out in the fees phase.
    s.set_vars({"cash": [150, 2900, 2900, 2900]})
    play(s, "put_up(Refinery)", *["pass_bid()"] * 4)
    play(s, *["declare(0)"] * 3)
    assert s.get_var("alive") == [False, True, True, True]
    play(s, *["declare(0)"] * 3)
    assert s.get_var("round") == 2
    play(s, "lobby(300)", "lobby(300)", "lobby(100)")
    assert s.current_player == rulelang.CHANCE
    play(s, "tie_die(2)", "tie_die(4)")
    assert s.get_var("leader") == 2


# ------------------------------------------------------------------ auction
def test_auction_where_everyone_passes(pola):
    s = pola().new_game(4)
    quiet_round_one(s)
    to_auction(s)
    assert s.current_player == 0
    assert s.legal_actions() == ["put_up(Tanker)", "put_up(Well)", "put_up(Refinery)"]
    play(s, "put_up(Refinery)")
    assert s.legal_actions()[-1] == "pass_bid()" and s.legal_actions()[0] == "bid(100)"
    play(s, *["pass_bid()"] * 4)
    # Nobody bought it: it stays in the pool and nobody pays (digest, inferred).
    assert s.get_var("refineries_left") == 9 and s.get_var("high_bidder") is None
    # No wells, no refineries: only the fees (200 each) before the exchange, with nothing
    # to sell.
    assert cash(s) == [2700] * 4
    assert s.legal_actions() == ["declare(0)"]


def test_auction_passes_are_final_and_unaffordable_raises_are_skipped(pola):
    s = pola().new_game(3)
    quiet_round_one(s)
    to_auction(s)
    s.set_vars({"cash": [2900, 250, 2900]})
    play(s, "put_up(Well)", "bid(100)")
    # Player 1 can raise to 200 only; he does. Player 2 passes for good.
    assert s.legal_actions() == ["bid(200)", "pass_bid()"]
    play(s, "bid(200)", "pass_bid()")
    # Player 0 raises to 300: player 1 cannot pay 400 and is skipped; 0 wins at 300.
    play(s, "bid(300)")
    assert s.current_player == 0 and s.get_var("high_bidder") == 0
    # L152-154: the auctioned well goes on any field with room, with no building cost.
    assert s.legal_actions() == ["place_well(PersianGulf)", "place_well(Texas)",
                                 "place_well(NorthSea)"]
    play(s, "place_well(PersianGulf)")
    assert s.get_var("wells")[0]["PersianGulf"] == 1
    # The bid, then (with no decision between) fees of 200 + 200: no well cost was paid.
    assert cash(s)[0] == 2900 - 300 - 400


# ------------------------------------------------------------------ extraction and supply
def test_storage_overflow_counts_stored_barrels(pola):
    s = pola().new_game(3)
    quiet_round_one(s)
    # Player 0 has 2 Texas wells (8 barrels) and keeps 3 barrels from earlier; 1 tanker holds 5.
    s.set_vars({"wells": [wells_row(Texas=2), wells_row(), wells_row()],
                "barrels": [3, 0, 0], "supply": 77})
    to_auction(s)
    play(s, "put_up(Tanker)", *["pass_bid()"] * 3)
    # Room for 2: 6 barrels are lost at 100 each (L160-162, Q4).
    assert barrels(s) == [5, 0, 0] and s.get_var("supply") == 75
    # Fees follow at once (no refinery): 200 + 2 x 300.
    assert cash(s) == [2900 - 600 - 800, 2700, 2700]


def test_refinery_shortfall(pola):
    s = pola().new_game(3)
    quiet_round_one(s)
    s.set_vars({"refineries": [2, 0, 0], "refineries_left": 5, "barrels": [4, 0, 0],
                "supply": 76})
    to_auction(s)
    play(s, "put_up(Tanker)", *["pass_bid()"] * 3)
    # Two refineries want 6 barrels; player 0 holds 4 (L164-166).
    assert s.current_player == 0
    assert s.legal_actions() == [f"deliver({n})" for n in range(5)]
    play(s, "deliver(4)")
    # 2 missing barrels x 300, then the fee for his tanker.
    assert cash(s)[0] == 2900 - 600 - 200
    assert barrels(s)[0] == 0 and s.get_var("supply") == 80


# ------------------------------------------------------------------ insolvency
def test_insolvency_mid_phase_returns_everything(pola):
    s = pola().new_game(4)
    quiet_round_one(s)
    # Player 1 owns 2 tankers, a refinery, a North Sea well and 4 barrels; his fees (900) are
    # more than his 500: he is out during the fees phase, the others pay on (L27-30).
    s.set_vars({"cash": [2900, 500, 2900, 2900], "tankers": [1, 2, 1, 1], "tankers_left": 15,
                "refineries": [0, 1, 0, 0], "refineries_left": 8,
                "wells": [wells_row(), wells_row(NorthSea=1), wells_row(), wells_row()],
                "barrels": [0, 3, 0, 0], "supply": 77})
    to_auction(s)
    play(s, "put_up(Tanker)", *["pass_bid()"] * 4)
    # Extraction gave him 7 more (room 7), refinery supply: he delivers all 3 owed.
    assert barrels(s)[1] == 10
    play(s, "deliver(3)")
    assert s.get_var("alive") == [True, False, True, True]
    assert cash(s) == [2700, 0, 2700, 2700]
    assert s.get_var("tankers") == [1, 0, 1, 1] and s.get_var("tankers_left") == 17
    assert s.get_var("refineries") == [0, 0, 0, 0] and s.get_var("refineries_left") == 9
    assert s.get_var("wells")[1] == wells_row() and barrels(s) == [0, 0, 0, 0]
    assert s.get_var("supply") == 80
    # He takes no further part: three declarations per session.
    play(s, *["declare(0)"] * 3, *["declare(0)"] * 3)
    assert s.get_var("round") == 2
    play(s, "lobby(100)", "lobby(200)", "lobby(100)")
    assert s.get_var("lobbied") == [100, 0, 200, 100]
    assert s.scores()[1] == 0


def test_last_survivor_ends_the_game(pola):
    s = pola().new_game(3)
    quiet_round_one(s)
    s.set_vars({"cash": [2900, 100, 100]})
    to_auction(s)
    play(s, "put_up(Tanker)", *["pass_bid()"] * 3)
    assert s.is_terminal()
    assert s.get_var("alive") == [True, False, False]
    assert s.winners() == [0] and s.scores() == [2700, 0, 0]


def test_player_who_cannot_lobby_is_out(pola):
    s = pola().new_game(4)
    play(s, *EXAMPLE_FIELDS[:3])
    s.set_vars({"cash": [3000, 50, 3000, 3000]})
    play(s, EXAMPLE_FIELDS[3], "lobby(100)")
    assert s.get_var("alive") == [True, False, True, True]
    # Q14: he was out before the sealed amounts, so player 2 is asked next.
    assert s.current_player == 2


# ------------------------------------------------------------------ secrecy
def test_sealed_choices_are_hidden_until_revealed(pola):
    s = pola().new_game(4)
    play(s, *EXAMPLE_FIELDS)
    n = len(s.history)
    play(s, "lobby(300)")
    for other in (K, A, P):
        obs = s.observation(other)
        assert obs["history"][n] == "?"
        assert obs["vars"]["sealed_lobby"][M] is None
        assert "lobby(300)" not in obs["history"]
    mine = s.observation(M)
    assert mine["history"][n] == "lobby(300)" and mine["vars"]["sealed_lobby"][M] == 300
    assert "legal_actions" in s.observation(K) and "legal_actions" not in s.observation(A)
    play(s, "lobby(200)", "lobby(300)")
    assert s.observation(P)["vars"]["lobbied"] == [0, 0, 0, 0]
    play(s, "lobby(100)")
    # Revealed together (`reveal lobby`): the amounts are public, and so are the sealed history
    # entries, for everyone.
    for viewer in range(4):
        obs = s.observation(viewer)
        assert obs["vars"]["lobbied"] == [300, 200, 300, 100]
        assert obs["history"][n:n + 4] == ["lobby(300)", "lobby(200)", "lobby(300)",
                                           "lobby(100)"]


def test_exchange_declarations_are_sealed(pola):
    s = pola().new_game(4)
    example_to_exchange(s)
    n = len(s.history)
    play(s, "declare(5)", "declare(4)")
    obs = s.observation(A)
    assert obs["history"][n:] == ["?", "?"]
    assert obs["vars"]["sealed_decl"] == [None, None, 0, None]
    assert obs["vars"]["declared"] == [0, 0, 0, 0]
    play(s, "declare(0)", "declare(7)")
    assert s.observation(A)["vars"]["declared"] == [5, 4, 0, 7]
    assert s.observation(A)["history"][n:n + 4] == ["declare(5)", "declare(4)", "declare(0)",
                                                    "declare(7)"]


# ------------------------------------------------------------------ final tie
def test_final_tie_settled_by_last_leader(pola):
    s = pola(rounds=1).new_game(3)
    quiet_round_one(s)
    to_auction(s)
    play(s, "put_up(Tanker)", *["pass_bid()"] * 3, *["declare(0)"] * 6)
    assert cash(s) == [2700] * 3 and s.current_player == 0
    play(s, "award_tie(2)")
    assert s.is_terminal() and s.winners() == [2]


# ------------------------------------------------------------------ whole games
def sensible_policy(rng: random.Random, s) -> str:
    """Random, but lobbying low, mostly passing in auctions, selling and delivering all, and
    never liquidating, so that most games last the 5 rounds."""
    acts = s.legal_actions()
    name = acts[0].split("(", 1)[0]
    if name == "lobby":
        return rng.choice(acts[:3])
    if "pass_bid()" in acts:
        return "pass_bid()" if rng.random() < 0.7 else acts[0]
    if name in ("declare", "deliver"):
        return acts[-1]
    if "done_building()" in acts and rng.random() < 0.5:
        return "done_building()"
    return rng.choice([a for a in acts if not a.startswith("liquidate")])


def check_invariants(s, players: int, pools: tuple[int, int]) -> None:
    cash_now, alive = cash(s), s.get_var("alive")
    assert all(c >= 0 for c in cash_now)
    assert all(cash_now[p] == 0 for p in range(players) if not alive[p])
    # Barrels, tankers and refineries are conserved; fields and well tokens hold their limits.
    assert sum(barrels(s)) + s.get_var("supply") == 80
    assert sum(s.get_var("tankers")) + s.get_var("tankers_left") == pools[0] + players
    assert sum(s.get_var("refineries")) + s.get_var("refineries_left") == pools[1]
    wells = s.get_var("wells")
    assert all(sum(w.values()) <= 8 for w in wells)
    for f, slots in {"PersianGulf": 6, "Texas": 5, "NorthSea": 2}.items():
        assert sum(w[f] for w in wells) <= slots
    tankers = s.get_var("tankers")
    assert all(barrels(s)[p] <= 5 * tankers[p] for p in range(players))


@pytest.mark.parametrize("players", [3, 4, 5])
def test_random_games_terminate(pola, players):
    game = pola()
    pools = {3: (12, 7), 4: (16, 9), 5: (15, 11)}[players]
    for seed in range(3):
        rng = random.Random(seed * 10 + players)
        s = game.new_game(players)
        steps = 0
        while not s.is_terminal():
            if s.current_player == rulelang.CHANCE:
                s.apply_index(rng.randrange(s.num_choices()))
            elif seed == 0:
                s.apply_index(rng.randrange(s.num_choices()))
            else:
                s.apply(sensible_policy(rng, s))
            check_invariants(s, players, pools)
            steps += 1
            assert steps < 5000
        # The game ends after round 5 or when one player is left.
        alive = s.get_var("alive")
        assert s.get_var("round") == 5 or sum(alive) == 1
        scores = s.scores()
        assert len(scores) == players and s.winners()
        assert all(alive[w] for w in s.winners())
