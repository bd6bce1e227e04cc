"""Golden scenarios for rules/acquire.rules, checked against the rulebook seed
002_dc5816b9bce1eec5.txt ("Lnn" = its line nn) and the digest's worked checks, on both back ends.

Positions are built with set_vars at a place decision (see `position`); chance is scripted by
applying the drawn tile's outcome string.
"""

from __future__ import annotations

import random

import pytest

from rulelang import CHANCE, IllegalAction

ROWS = "ABCDEFGHI"
# Tile order as the engine lists grid cells: row A first, then by column (1A, 2A, ..., 12I).
TILES = [f"{c}{r}" for r in ROWS for c in range(1, 13)]
CHAINS = ("Luxor", "Tower", "American", "Festival", "Worldwide", "Continental", "Imperial")
# L28: tier 0 = Luxor, Tower; 1 = American, Festival, Worldwide; 2 = Continental, Imperial.
TIER = {"Luxor": 0, "Tower": 0, "American": 1, "Festival": 1, "Worldwide": 1,
        "Continental": 2, "Imperial": 2}
# L29-L39, copied from the book: (lowest size, highest size) -> (low, mid, high) price.
BOOK_PRICES = [
    ((2, 2), (200, 300, 400)),
    ((3, 3), (300, 400, 500)),
    ((4, 4), (400, 500, 600)),
    ((5, 5), (500, 600, 700)),
    ((6, 10), (600, 700, 800)),
    ((11, 20), (700, 800, 900)),
    ((21, 30), (800, 900, 1000)),
    ((31, 40), (900, 1000, 1100)),
    ((41, 108), (1000, 1100, 1200)),
]


def book_price(chain: str, size: int) -> int:
    for (lo, hi), prices in BOOK_PRICES:
        if lo <= size <= hi:
            return prices[TIER[chain]]
    raise AssertionError(size)


# ---------------------------------------------------------------------------- set-up helpers

def row(r: str, c1: int, c2: int) -> list[str]:
    """Tiles of row r from column c1 to c2 inclusive."""
    return [f"{c}{r}" for c in range(c1, c2 + 1)]


def col(c: int, r1: str, r2: str) -> list[str]:
    """Tiles of column c from row r1 to r2 inclusive."""
    return [f"{c}{r}" for r in ROWS[ROWS.index(r1):ROWS.index(r2) + 1]]


def opening(game, n: int, first: int = 0):
    """A new n-player game whose opening draw makes `first` start (it draws 1A, the tile closest
    to 1A); the deal takes the first listed outcome each time. Stops at first's place decision."""
    s = game.new_game(n)
    spare = iter(reversed(TILES))
    for q in range(n):
        s.apply("draw_opening(1A)" if q == first else f"draw_opening({next(spare)})")
    while s.current_player == CHANCE:
        s.apply(s.chance_outcomes()[0][0])
    assert s.current_player == first
    return s


def position(game, n: int = 3, p: int = 0, chains: dict | None = None, loose=(),
             hands: dict | None = None, shares: dict | None = None, cash: list | None = None,
             removed=(), bank: dict | None = None, start=None):
    """A consistent position at player p's place decision.

    chains: {chain: [tiles]}; loose: loose board tiles; hands: {player: [tiles]} (others empty);
    shares: {player: {chain: n}}; bank: shares_per_chain minus the players' shares unless given;
    every tile not on the board, in a hand or removed goes to the bag. `start` (a state from
    `opening` with the same n and p) saves replaying the opening.
    """
    s = start.clone() if start is not None else opening(game, n, p)
    assert s.current_player == p
    chains = chains or {}
    hands = hands or {}
    shares = shares or {}
    chain_of = dict.fromkeys(TILES)
    board = set(loose)
    for c, ts in chains.items():
        assert len(ts) >= 2, c
        for t in ts:
            assert chain_of[t] is None and t not in board, t
            chain_of[t] = c
            board.add(t)
    hand_lists = [sorted(hands.get(q, []), key=TILES.index) for q in range(n)]
    used = list(board) + [t for h in hand_lists for t in h] + list(removed)
    assert len(used) == len(set(used)), "a tile is in two places"
    assert set(used) <= set(TILES)
    share_rows = [{c: shares.get(q, {}).get(c, 0) for c in CHAINS} for q in range(n)]
    per_chain = game.new_game(n).get_var("bank")["Luxor"]
    full_bank = {c: per_chain - sum(r[c] for r in share_rows) for c in CHAINS}
    full_bank.update(bank or {})
    values = {
        "board": sorted(board, key=TILES.index),
        "loose": sorted(loose, key=TILES.index),
        "chain_of": chain_of,
        "size": {c: len(chains.get(c, ())) for c in CHAINS},
        "hand": hand_lists,
        "bag": [t for t in TILES if t not in set(used)],
        "removed": sorted(removed, key=TILES.index),
        "shares": share_rows,
        "bank": full_bank,
        "ending": False,
    }
    if cash is not None:
        values["cash"] = list(cash)
    s.set_vars(values)
    return s


def play(s, *actions: str) -> None:
    for a in actions:
        s.apply(a)


def shares_of(s, chain: str) -> list[int]:
    return [row_[chain] for row_ in s.get_var("shares")]


def size(s, chain: str) -> int:
    return s.get_var("size")[chain]


def assert_tiles_conserved(s) -> None:
    places = (s.get_var("bag") + s.get_var("board") + s.get_var("removed")
              + [t for h in s.get_var("hand") for t in h])
    assert sorted(places, key=TILES.index) == TILES


# ---------------------------------------------------------------------------- prices (L28-L40)

@pytest.mark.parametrize("chain", CHAINS)
def test_price_table_every_size_and_tier(load_rules, chain):
    """A share bought from a chain of each size 2..45 costs the book's price (L28-L39)."""
    game = load_rules("acquire")
    start = opening(game, 3)
    for n in range(2, 46):
        s = position(game, chains={chain: TILES[:n]}, hands={0: ["12I"]}, start=start)
        play(s, "place(12I)")
        assert f"buy({chain})" in s.legal_actions()
        s.apply(f"buy({chain})")
        assert 6000 - s.get_var("cash")[0] == book_price(chain, n), (chain, n)
        assert shares_of(s, chain)[0] == 1 and s.get_var("bank")[chain] == 24


def test_worldwide_12_majority_8000_minority_4000(load_rules):
    """L40: Worldwide with 12 tiles: share $800, majority $8,000, minority $4,000 (paid at the
    end, since a chain of 12 is safe)."""
    game = load_rules("acquire")
    s = position(game, chains={"Worldwide": row("A", 1, 12)}, hands={0: ["12I", "12G"]},
                 shares={0: {"Worldwide": 3}, 1: {"Worldwide": 2}, 2: {"Worldwide": 1}})
    play(s, "declare_end()", "place(12I)", "buy(Worldwide)")
    assert s.get_var("cash")[0] == 6000 - 800
    s.apply("end_buy()")
    assert s.is_terminal()
    # P0: 8000 majority + 4 shares x 800; P1: 4000 minority + 2 x 800; P2: 1 x 800 only.
    assert s.get_var("cash") == [5200 + 8000 + 3200, 6000 + 4000 + 1600, 6000 + 800]
    assert s.scores() == [16400, 11600, 6800]
    assert s.winners() == [0]


# ---------------------------------------------------------------------------- bonuses (L44-L46)

def merger_two(game, defunct: str, defunct_size: int, survivor: str, survivor_size: int,
               defunct_shares: dict, n: int = 3, p: int = 0, params_start=None):
    """survivor on row A from 1A, defunct on row A after a one-tile gap; p holds the gap tile.
    The survivor gets one share held by p so it has a holder."""
    gap = survivor_size + 1
    chains = {survivor: row("A", 1, survivor_size),
              defunct: row("A", gap + 1, gap + defunct_size)}
    shares = {q: {defunct: k} for q, k in defunct_shares.items()}
    shares.setdefault(p, {})[survivor] = 1
    return position(game, n, p, chains=chains, hands={p: [f"{gap}A", "12I"]}, shares=shares,
                    start=params_start), f"{gap}A"


def test_majority_tie_splits_both_bonuses_no_minority(load_rules):
    """Digest 8.3: Luxor with 5 tiles, two tied for first: (5000 + 2500) / 2 rounded up to
    $3,800 each; the third holder gets no minority (L45)."""
    game = load_rules("acquire")
    s, tile = merger_two(game, "Luxor", 5, "Tower", 6, {0: 2, 1: 2, 2: 1})
    s.apply(f"place({tile})")
    assert s.get_var("cash") == [9800, 9800, 6000]
    assert s.current_player == 0 and s.legal_actions()[0] == "dispose(0, 0)"


def test_minority_tie_rounds_up(load_rules):
    """Digest 8.3: Tower with 3 tiles, two tied for second: 1500 / 2 rounded up to $800 each."""
    game = load_rules("acquire")
    s, tile = merger_two(game, "Tower", 3, "Luxor", 5, {0: 3, 1: 1, 2: 1})
    s.apply(f"place({tile})")
    assert s.get_var("cash") == [6000 + 3000, 6800, 6800]


def test_clear_majority_and_minority(load_rules):
    """L44: the largest holder gets 10x, the second 5x, the others nothing."""
    game = load_rules("acquire")
    s, tile = merger_two(game, "Luxor", 5, "Tower", 6, {0: 1, 1: 3, 2: 2})
    s.apply(f"place({tile})")
    assert s.get_var("cash") == [6000, 11000, 8500]


def test_sole_shareholder_gets_both_bonuses(load_rules):
    """L46: the only holder of Festival (4 tiles, $500) gets 10x + 5x = $7,500."""
    game = load_rules("acquire")
    s, tile = merger_two(game, "Festival", 4, "Imperial", 6, {1: 3})
    s.apply(f"place({tile})")
    assert s.get_var("cash") == [6000, 13500, 6000]
    assert s.current_player == 1  # P0 (the placer) holds no Festival, so P1 disposes first


def test_three_tied_first_mid_chain_12_at_end(load_rules):
    """Digest 8.3: three tied for first on a mid chain of 12 ($800): 12000 / 3 = $4,000 each;
    a fourth, smaller holder gets no minority."""
    game = load_rules("acquire")
    s = position(game, 4, chains={"American": row("A", 1, 12)}, hands={0: ["12I"]},
                 shares={0: {"American": 2}, 1: {"American": 2}, 2: {"American": 2},
                         3: {"American": 1}})
    play(s, "declare_end()", "place(12I)", "end_buy()")
    assert s.is_terminal()
    assert s.get_var("cash") == [6000 + 4000 + 1600] * 3 + [6000 + 800]
    assert s.winners() == [0, 1, 2]


def test_three_tied_first_mid_chain_12_in_merger(load_rules):
    """The same split in a merger, with safe_size raised so a 12-tile chain can be absorbed."""
    game = load_rules("acquire", params={"safe_size": 20})
    s = position(game, 4, chains={"Luxor": TILES[:13], "Festival": row("D", 1, 12)},
                 hands={0: ["1C"]},
                 shares={0: {"Festival": 2, "Luxor": 1}, 1: {"Festival": 2},
                         2: {"Festival": 2}, 3: {"Festival": 1}})
    s.apply("place(1C)")
    assert s.get_var("cash") == [10000, 10000, 10000, 6000]


# ---------------------------------------------------------------------------- mergers (L41-L51)

def test_four_chain_merger_resolved_largest_to_smallest(load_rules):
    """L51: 5E joins Continental (7), Luxor (5), Tower (3), American (2): Continental survives,
    then Luxor, Tower and American are paid and disposed one at a time in that order."""
    game = load_rules("acquire")
    chains = {"Continental": ["4E", "3E", "2E", "1E", "1D", "1C", "1B"],
              "Luxor": ["5D", "5C", "5B", "5A", "6A"],
              "Tower": ["6E", "7E", "8E"],
              "American": ["5F", "5G"]}
    s = position(game, chains=chains, hands={0: ["5E", "12I"]},
                 shares={0: {"Continental": 1, "American": 1}, 1: {"Luxor": 2},
                         2: {"Tower": 1}})
    s.apply("place(5E)")
    # Luxor first ($500, sole holder P1); nobody else has been paid yet.
    assert s.current_player == 1 and s.get_var("cash") == [6000, 13500, 6000]
    s.apply("dispose(0, 0)")
    # Tower next ($300, sole holder P2).
    assert s.current_player == 2 and s.get_var("cash") == [6000, 13500, 10500]
    s.apply("dispose(0, 0)")
    # American last ($300 at size 2, tier 1; sole holder P0).
    assert s.current_player == 0 and s.get_var("cash") == [10500, 13500, 10500]
    s.apply("dispose(1, 0)")
    assert s.get_var("cash")[0] == 10800
    assert s.history[-4:] == ["place(5E)", "dispose(0, 0)", "dispose(0, 0)", "dispose(1, 0)"]
    assert "end_buy()" in s.legal_actions()  # now the buy step
    assert size(s, "Continental") == 7 + 5 + 3 + 2 + 1
    assert [size(s, c) for c in ("Luxor", "Tower", "American")] == [0, 0, 0]
    chain_of = s.get_var("chain_of")
    assert all(chain_of[t] == "Continental" for ts in chains.values() for t in ts)
    assert chain_of["5E"] == "Continental"
    assert "5E" not in s.get_var("loose")


def test_a_merger_shows_its_defunct_and_surviving_chain(load_rules):
    """The holders dispose knowing which chain is defunct and which survives (the view shows
    defunct_chain and surviving_chain); outside a merger both are none."""
    game = load_rules("acquire")
    chains = {"Continental": ["4E", "3E", "2E", "1E", "1D", "1C", "1B"],
              "Luxor": ["5D", "5C", "5B", "5A", "6A"],
              "Tower": ["6E", "7E", "8E"]}
    s = position(game, chains=chains, hands={0: ["5E", "12I"]},
                 shares={1: {"Luxor": 2}, 2: {"Tower": 1}})
    assert [s.get_var("defunct_chain"), s.get_var("surviving_chain")] == [None, None]
    s.apply("place(5E)")
    assert [s.get_var("defunct_chain"), s.get_var("surviving_chain")] == ["Luxor", "Continental"]
    s.apply("dispose(0, 0)")
    assert [s.get_var("defunct_chain"), s.get_var("surviving_chain")] == ["Tower", "Continental"]
    s.apply("dispose(0, 0)")
    assert "end_buy()" in s.legal_actions()
    assert [s.get_var("defunct_chain"), s.get_var("surviving_chain")] == [None, None]


def test_three_chain_merger_resolved_largest_to_smallest(load_rules):
    """L51: 5E joins Luxor (6), American (4), Tower (2): American is resolved before Tower."""
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("E", 1, 4) + ["1D", "1C"],
                               "Tower": ["5D", "5C"], "American": row("E", 6, 9)},
                 hands={0: ["5E"]},
                 shares={0: {"Luxor": 1}, 1: {"Tower": 1}, 2: {"American": 1}})
    s.apply("place(5E)")
    assert s.current_player == 2 and s.get_var("cash") == [6000, 6000, 6000 + 7500]
    s.apply("dispose(0, 0)")
    assert s.current_player == 1 and s.get_var("cash") == [6000, 6000 + 3000, 13500]
    s.apply("dispose(0, 0)")
    assert s.current_player == 0 and size(s, "Luxor") == 13


def test_survivor_choice_only_among_tied_largest(load_rules):
    """L43: on equal largest sizes the placer picks the survivor, among those only."""
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("E", 1, 4), "Tower": col(5, "A", "D"),
                               "American": ["5F", "5G"]},
                 hands={0: ["5E"]},
                 shares={0: {"Luxor": 1}, 1: {"Tower": 1}, 2: {"American": 1}})
    s.apply("place(5E)")
    assert s.current_player == 0
    assert s.legal_actions() == ["survivor(Luxor)", "survivor(Tower)"]
    with pytest.raises(IllegalAction):
        s.apply("survivor(American)")
    s.apply("survivor(Tower)")
    # Luxor (4) is resolved before American (2) with no order choice.
    assert s.current_player == 0 and s.get_var("cash") == [6000 + 6000, 6000, 6000]
    s.apply("dispose(0, 0)")
    assert s.current_player == 2 and s.get_var("cash")[2] == 6000 + 4500
    s.apply("dispose(0, 0)")
    assert size(s, "Tower") == 11 and size(s, "Luxor") == 0 and size(s, "American") == 0


def test_no_survivor_choice_when_largest_is_unique(load_rules):
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("E", 1, 4), "Tower": col(5, "B", "D")},
                 hands={0: ["5E"]}, shares={0: {"Luxor": 1}, 1: {"Tower": 1}})
    s.apply("place(5E)")
    assert s.current_player == 1
    assert not any(a.startswith("survivor") for a in s.legal_actions())


def test_defunct_order_choice_among_equal_defunct(load_rules):
    """Digest 8.2 (official rules): the placer orders equal-size defunct chains."""
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("E", 1, 4) + ["1D"], "Tower": col(5, "B", "D"),
                               "American": row("E", 6, 8)},
                 hands={0: ["5E"]},
                 shares={0: {"Luxor": 1}, 1: {"Tower": 1}, 2: {"American": 1}})
    s.apply("place(5E)")
    assert s.current_player == 0
    assert s.legal_actions() == ["defunct(Tower)", "defunct(American)"]
    s.apply("defunct(American)")
    assert s.current_player == 2 and s.get_var("cash") == [6000, 6000, 6000 + 6000]
    s.apply("dispose(0, 0)")
    assert s.current_player == 1 and s.get_var("cash")[1] == 6000 + 4500
    s.apply("dispose(0, 0)")
    assert size(s, "Luxor") == 5 + 3 + 3 + 1


def test_four_equal_chains_choices(load_rules):
    """Four chains of 2: survivor among all four, then the order of the three others."""
    game = load_rules("acquire")
    s = position(game, 4, chains={"Luxor": ["4E", "3E"], "Tower": ["5D", "5C"],
                                  "American": ["6E", "7E"], "Festival": ["5F", "5G"]},
                 hands={0: ["5E"]},
                 shares={0: {"Luxor": 1}, 1: {"Tower": 1}, 2: {"American": 1},
                         3: {"Festival": 1}})
    s.apply("place(5E)")
    assert s.legal_actions() == ["survivor(Luxor)", "survivor(Tower)", "survivor(American)",
                                 "survivor(Festival)"]
    s.apply("survivor(Festival)")
    assert s.legal_actions() == ["defunct(Luxor)", "defunct(Tower)", "defunct(American)"]
    s.apply("defunct(Tower)")
    assert s.current_player == 1
    s.apply("dispose(0, 0)")
    assert s.current_player == 0
    assert s.legal_actions() == ["defunct(Luxor)", "defunct(American)"]
    s.apply("defunct(American)")
    assert s.current_player == 2
    s.apply("dispose(0, 0)")
    # Luxor is the last one left: no choice, P0 disposes it.
    assert s.current_player == 0 and s.legal_actions()[0] == "dispose(0, 0)"
    s.apply("dispose(0, 0)")
    assert size(s, "Festival") == 9
    # Each sole holder got 15 x the price at size 2: Luxor/Tower 200, American 300.
    assert s.get_var("cash") == [9000, 9000, 10500, 6000]


def test_disposal_order_and_trades_limited_by_bank(load_rules):
    """L47-L49: from the placer on in seat order; 2-for-1 trades only while the survivor's bank
    has shares, so a later holder may find it empty."""
    game = load_rules("acquire")
    s = position(game, 4, p=2, chains={"Luxor": row("A", 1, 5), "Tower": row("A", 7, 9)},
                 hands={2: ["6A"]},
                 shares={0: {"Luxor": 24, "Tower": 2}, 1: {"Tower": 5}, 2: {"Tower": 4},
                         3: {"Tower": 2}})
    assert s.get_var("bank")["Luxor"] == 1
    s.apply("place(6A)")
    # Tower at 3 tiles: $300; P1 majority 3000, P2 minority 1500.
    assert s.get_var("cash") == [6000, 9000, 7500, 6000]
    assert s.current_player == 2
    legal = s.legal_actions()
    assert "dispose(0, 4)" not in legal and "dispose(0, 2)" in legal
    assert "dispose(2, 2)" in legal and "dispose(4, 0)" in legal and "dispose(3, 2)" not in legal
    d = s.digest()
    with pytest.raises(IllegalAction):
        s.apply("dispose(0, 4)")
    assert s.digest() == d
    s.apply("dispose(1, 2)")
    assert s.get_var("cash")[2] == 7800
    assert shares_of(s, "Tower")[2] == 1 and shares_of(s, "Luxor")[2] == 1
    assert s.get_var("bank")["Luxor"] == 0
    assert s.current_player == 3
    assert s.legal_actions() == ["dispose(0, 0)", "dispose(1, 0)", "dispose(2, 0)"]
    s.apply("dispose(2, 0)")
    assert s.current_player == 0
    assert s.legal_actions() == ["dispose(0, 0)", "dispose(1, 0)", "dispose(2, 0)"]
    s.apply("dispose(0, 0)")
    assert s.current_player == 1
    s.apply("dispose(5, 0)")
    # Luxor's bank is empty and Tower is gone: nothing to buy, so on to the draw.
    assert s.current_player == CHANCE
    assert s.get_var("cash") == [6000, 10500, 7800, 6600]
    assert shares_of(s, "Tower") == [2, 0, 1, 0] and s.get_var("bank")["Tower"] == 22
    assert size(s, "Luxor") == 9


def test_trade_two_for_one(load_rules):
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("A", 1, 5), "Tower": row("A", 7, 9)},
                 hands={0: ["6A"]}, shares={0: {"Luxor": 1}, 1: {"Tower": 5}})
    s.apply("place(6A)")
    assert s.current_player == 1
    legal = s.legal_actions()
    # Every split of 5 into sell + even trade (keep the rest), nothing more.
    assert sorted(legal) == sorted(f"dispose({a}, {b})" for a in range(6) for b in range(0, 6, 2)
                                   if a + b <= 5)
    s.apply("dispose(0, 4)")
    assert shares_of(s, "Luxor") == [1, 2, 0] and shares_of(s, "Tower") == [0, 1, 0]
    assert s.get_var("bank")["Luxor"] == 22 and s.get_var("bank")["Tower"] == 24


def test_sell_at_defunct_pre_merger_price(load_rules):
    """L48, A8: defunct shares sell at the defunct chain's price before the merger (Imperial at 3
    tiles: $500), not at the survivor's price (American 7 -> 11 tiles: $700 -> $800)."""
    game = load_rules("acquire")
    s = position(game, chains={"American": row("A", 1, 7), "Imperial": row("A", 9, 11)},
                 hands={0: ["8A", "12I"]},
                 shares={0: {"Imperial": 1}, 1: {"Imperial": 3}, 2: {"American": 1}})
    s.apply("place(8A)")
    assert s.get_var("cash") == [8500, 11000, 6000]
    assert s.current_player == 0
    s.apply("dispose(1, 0)")
    s.apply("dispose(3, 0)")
    assert s.get_var("cash") == [9000, 12500, 6000]
    assert s.get_var("bank")["Imperial"] == 25
    s.apply("buy(American)")  # after the merger: post-merger price (L51)
    assert s.get_var("cash")[0] == 9000 - 800


def test_safe_chain_never_absorbed(load_rules):
    """L53: a safe chain (11+) survives a merger with a smaller chain, and a tile joining two
    safe chains is dead even when one is larger."""
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("A", 1, 11), "Tower": row("C", 1, 10)},
                 hands={0: ["1B", "12I"]}, shares={0: {"Luxor": 1}, 1: {"Tower": 1}})
    s.apply("place(1B)")
    assert s.current_player == 1 and s.get_var("cash") == [6000, 6000 + 9000, 6000]
    s.apply("dispose(0, 0)")
    assert size(s, "Luxor") == 22 and size(s, "Tower") == 0

    s = position(game, chains={"Luxor": row("A", 1, 12), "Tower": row("C", 1, 11)},
                 hands={0: ["1B", "12B", "12I"]}, shares={0: {"Luxor": 1}, 1: {"Tower": 1}})
    legal = s.legal_actions()
    assert "place(1B)" not in legal and "place(12I)" in legal
    assert "place(12B)" in legal  # 12B touches only Luxor: growth
    with pytest.raises(IllegalAction):
        s.apply("place(1B)")


# ---------------------------------------------------------------------------- founding (L23-L24)

def test_founding_gives_free_share_not_counted_as_purchase(load_rules):
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": ["1A", "2A"]}, loose=["1E", "1F"],
                 hands={0: ["2E"]}, shares={1: {"Luxor": 1}})
    s.apply("place(2E)")
    # Only available chains may be founded.
    assert s.legal_actions() == [f"found({c})" for c in CHAINS if c != "Luxor"]
    s.apply("found(Imperial)")
    assert size(s, "Imperial") == 3 and shares_of(s, "Imperial") == [1, 0, 0]
    assert s.get_var("loose") == []
    assert s.get_var("bank")["Imperial"] == 24
    play(s, "buy(Imperial)", "buy(Imperial)", "buy(Imperial)")
    assert s.current_player == CHANCE  # three purchases end the buy step
    assert shares_of(s, "Imperial")[0] == 4 and s.get_var("cash")[0] == 6000 - 3 * 500


def test_founder_gets_nothing_when_bank_is_empty(load_rules):
    """L24: the founder's share only "if the bank still has one"."""
    game = load_rules("acquire")
    s = position(game, loose=["1E"], hands={0: ["2E"]}, shares={1: {"Luxor": 25}})
    assert s.get_var("bank")["Luxor"] == 0
    s.apply("place(2E)")
    other = s.clone()
    s.apply("found(Luxor)")
    assert size(s, "Luxor") == 2
    assert shares_of(s, "Luxor") == [0, 25, 0] and s.get_var("bank")["Luxor"] == 0
    assert "buy(Luxor)" not in s.legal_actions()
    other.apply("found(Tower)")
    assert shares_of(other, "Tower") == [1, 0, 0]


# ---------------------------------------------------------------------------- buying (L20)

def seven_pairs() -> dict:
    """All seven chains active as pairs of tiles, none adjacent to another."""
    return {"Luxor": ["1A", "2A"], "Tower": ["4A", "5A"], "American": ["7A", "8A"],
            "Festival": ["10A", "11A"], "Worldwide": ["1C", "2C"],
            "Continental": ["4C", "5C"], "Imperial": ["7C", "8C"]}


def test_buy_only_active_chains_at_most_three(load_rules):
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": ["1A", "2A"], "Tower": ["4A", "5A"],
                               "American": ["7A", "8A"]},
                 hands={0: ["12I"]}, cash=[10000, 6000, 6000],
                 shares={1: {"Luxor": 1, "Tower": 1, "American": 1}})
    s.apply("place(12I)")
    assert s.legal_actions() == ["buy(Luxor)", "buy(Tower)", "buy(American)", "end_buy()"]
    with pytest.raises(IllegalAction):
        s.apply("buy(Festival)")
    play(s, "buy(Luxor)", "buy(American)", "buy(Luxor)")
    assert s.current_player == CHANCE
    assert s.get_var("cash")[0] == 10000 - 200 - 300 - 200
    assert shares_of(s, "Luxor")[0] == 2 and shares_of(s, "American")[0] == 1


def test_buy_no_credit(load_rules):
    game = load_rules("acquire")
    chains = {"Luxor": ["1A", "2A"], "American": ["7A", "8A"]}
    s = position(game, chains=chains, hands={0: ["12I"]}, cash=[250, 6000, 6000],
                 shares={1: {"Luxor": 1, "American": 1}})
    s.apply("place(12I)")
    assert s.legal_actions() == ["buy(Luxor)", "end_buy()"]
    s.apply("buy(Luxor)")
    assert s.get_var("cash")[0] == 50
    assert s.current_player == CHANCE  # nothing affordable: the buy step ends
    # Exactly the price is enough; $0 buys nothing (L65 tip).
    s = position(game, chains=chains, hands={0: ["12I"]}, cash=[200, 6000, 6000],
                 shares={1: {"Luxor": 1, "American": 1}})
    play(s, "place(12I)", "buy(Luxor)")
    assert s.get_var("cash")[0] == 0 and s.current_player == CHANCE
    s = position(game, chains=chains, hands={0: ["12I"]}, cash=[0, 6000, 6000],
                 shares={1: {"Luxor": 1, "American": 1}})
    s.apply("place(12I)")
    assert s.current_player == CHANCE


def test_buy_needs_bank_stock(load_rules):
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": ["1A", "2A"], "Tower": ["4A", "5A"]},
                 hands={0: ["12I"]}, shares={1: {"Luxor": 25, "Tower": 1}})
    s.apply("place(12I)")
    assert s.legal_actions() == ["buy(Tower)", "end_buy()"]


def test_params_override(load_rules):
    game = load_rules("acquire", params={"start_cash": 5000, "max_buy": 2})
    assert game.new_game(4).get_var("cash") == [5000] * 4
    s = position(game, chains={"Luxor": ["1A", "2A"]}, hands={0: ["12I"]},
                 shares={1: {"Luxor": 1}})
    play(s, "place(12I)", "buy(Luxor)", "buy(Luxor)")
    assert s.current_player == CHANCE
    assert s.get_var("cash")[0] == 4600 and shares_of(s, "Luxor")[0] == 2


def test_shares_per_chain_param(load_rules):
    game = load_rules("acquire", params={"shares_per_chain": 10})
    assert set(game.new_game(2).get_var("bank").values()) == {10}


# ---------------------------------------------------------------------------- unplayable tiles

def test_dead_tiles_replaced_at_draw_step(load_rules):
    """L55, A1: a dead tile in hand goes to `removed` at the draw step, and a dead tile drawn is
    removed too and replaced by another draw."""
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("A", 1, 11), "Tower": row("C", 1, 11)},
                 hands={0: ["3B", "12I", "10G", "8G", "6G", "4G"]},
                 shares={0: {"Luxor": 1}, 1: {"Tower": 1}})
    legal = s.legal_actions()
    assert "place(3B)" not in legal and "place(12I)" in legal
    play(s, "place(12I)", "end_buy()")
    assert s.current_player == CHANCE
    assert s.get_var("removed") == ["3B"]
    assert "draw_tile(5B)" in [o for o, _ in s.chance_outcomes()]
    s.apply("draw_tile(5B)")  # dead as well
    assert s.current_player == CHANCE and s.get_var("removed") == ["3B", "5B"]
    play(s, "draw_tile(12E)", "draw_tile(12G)")
    assert s.current_player == 1
    assert s.get_var("hand")[0] == ["12E", "4G", "6G", "8G", "10G", "12G"]
    assert_tiles_conserved(s)


def test_empty_bag_no_draw(load_rules):
    """Digest 12 (official rules): with the bag empty nobody draws and play goes on."""
    game = load_rules("acquire")
    hands = {0: ["12I", "10I"], 1: ["12G"]}
    kept = {"1A", "2A", "12I", "10I", "12G"}
    s = position(game, 2, chains={"Luxor": ["1A", "2A"]}, hands=hands,
                 shares={0: {"Luxor": 1}}, removed=[t for t in TILES if t not in kept])
    assert s.get_var("bag") == []
    play(s, "place(12I)", "end_buy()")
    assert s.current_player == 1 and s.get_var("hand")[0] == ["10I"]
    assert s.legal_actions()[0] == "place(12G)"


def test_eighth_chain_tile_held_until_a_chain_is_freed(load_rules):
    """L56: with seven chains active a founding tile cannot be placed; after a merger frees a
    chain it can."""
    game = load_rules("acquire")
    s = position(game, 2, chains=seven_pairs(), loose=["10E"],
                 hands={0: ["11E", "3A", "12I"], 1: ["6I", "12G"]},
                 shares={0: dict.fromkeys(CHAINS, 1)})
    legal = s.legal_actions()
    assert "place(11E)" not in legal and "place(3A)" in legal
    with pytest.raises(IllegalAction):
        s.apply("place(11E)")
    play(s, "place(3A)", "survivor(Luxor)", "dispose(0, 0)", "end_buy()")
    assert size(s, "Tower") == 0 and size(s, "Luxor") == 5
    play(s, "draw_tile(12E)", "draw_tile(1I)", "draw_tile(3I)", "draw_tile(5I)")
    assert s.current_player == 1
    play(s, "place(6I)", "end_buy()")
    while s.current_player == CHANCE:
        s.apply(s.chance_outcomes()[-1][0])
    assert s.current_player == 0 and "place(11E)" in s.legal_actions()
    s.apply("place(11E)")
    assert s.legal_actions() == ["found(Tower)"]
    s.apply("found(Tower)")
    assert size(s, "Tower") == 2 and shares_of(s, "Tower") == [2, 0]
    # With six chains active the same tile founds the seventh.
    six = {c: ts for c, ts in seven_pairs().items() if c != "Imperial"}
    s = position(game, 2, chains=six, loose=["10E"], hands={0: ["11E"]},
                 shares={0: dict.fromkeys(six, 1)})
    s.apply("place(11E)")
    assert s.legal_actions() == ["found(Imperial)"]


def seven_chains_two_safe() -> dict:
    """Luxor and Tower safe with dead tiles 1B..11B between them; five more chains of 2."""
    return {"Luxor": row("A", 1, 11), "Tower": row("C", 1, 11),
            "American": ["1E", "2E"], "Festival": ["4E", "5E"], "Worldwide": ["7E", "8E"],
            "Continental": ["1G", "2G"], "Imperial": ["4G", "5G"]}


def test_game_continues_while_a_dead_tile_can_still_be_replaced(load_rules):
    """U7 (decision): the game ends by itself only when no player can ever place a tile again.
    Here every hand is unplayable but P1 holds a dead tile: at the draw step it is replaced, so
    the game must go on to P1's turn."""
    game = load_rules("acquire", params={"hand_size": 2})
    s = position(game, 2, chains=seven_chains_two_safe(), loose=["10I"],
                 hands={0: ["9I", "12E"], 1: ["11I", "3B"]},
                 shares={0: dict.fromkeys(CHAINS, 1)})
    play(s, "place(12E)", "end_buy()", "draw_tile(10H)")  # 10H founds an eighth chain
    assert not s.is_terminal()
    assert s.current_player == 1 and s.legal_actions() == ["pass_place()"]
    play(s, "pass_place()", "end_buy()")
    assert s.get_var("removed") == ["3B"]
    s.apply("draw_tile(12A)")  # grows Luxor: playable
    assert s.get_var("hand")[1] == ["12A", "11I"]
    assert s.current_player == 0 and s.legal_actions() == ["pass_place()"]


def test_game_ends_when_no_tile_can_ever_be_placed(load_rules):
    """U7 (decision): all hands hold only eighth-chain tiles and no dead tile: the game ends
    after the turn with the final payout."""
    game = load_rules("acquire", params={"hand_size": 2})
    s = position(game, 2, chains=seven_chains_two_safe(), loose=["10I"],
                 hands={0: ["9I", "12E"], 1: ["11I", "10H"]},
                 shares={0: dict.fromkeys(CHAINS, 1)})
    play(s, "place(12E)", "end_buy()", "draw_tile(12F)")  # 12F touches loose 12E: eighth chain
    assert s.is_terminal()
    # P0 sole holder of all seven: 15x price + 1 share each.
    prices = {"Luxor": 700, "Tower": 700, "American": 300, "Festival": 300, "Worldwide": 300,
              "Continental": 400, "Imperial": 400}
    assert s.get_var("cash") == [6000 + 16 * sum(prices.values()), 6000]


# ---------------------------------------------------------------------------- end (L57-L61)

@pytest.mark.parametrize("chains,allowed", [
    ({"Luxor": TILES[:40], "Tower": ["1H", "2H"]}, False),
    ({"Luxor": TILES[:41], "Tower": ["1H", "2H"]}, True),
    ({"Luxor": row("A", 1, 11), "Tower": row("C", 1, 11)}, True),
    ({"Luxor": row("A", 1, 11), "Tower": row("C", 1, 10)}, False),
    ({"Luxor": row("A", 1, 11)}, True),
    ({"Luxor": row("A", 1, 10)}, False),
    ({}, False),  # U5: no chain on the board is not "all safe"
])
def test_declare_end_condition(load_rules, chains, allowed):
    game = load_rules("acquire")
    s = position(game, chains=chains, loose=["12G"], hands={0: ["12I"]},
                 shares={1: dict.fromkeys(chains, 1)})
    assert ("declare_end()" in s.legal_actions()) == allowed
    s.apply("place(12I)")
    if s.current_player == 0:
        assert ("declare_end()" in s.legal_actions()) == allowed


def test_declare_end_after_tile_then_final_payout(load_rules):
    """L58-L61: the tile makes Luxor 41; the placer declares, buys, and the game ends without a
    draw; bonuses for every chain on the board, then all shares sold at current prices."""
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": TILES[:40], "Tower": ["1H", "2H"]},
                 hands={0: ["5D", "12I"]},
                 shares={0: {"Luxor": 5, "Festival": 3}, 1: {"Luxor": 3, "Tower": 1},
                         2: {"Luxor": 3, "Tower": 2}})
    assert "declare_end()" not in s.legal_actions()
    bag = s.get_var("bag")
    s.apply("place(5D)")
    assert size(s, "Luxor") == 41 and "declare_end()" in s.legal_actions()
    play(s, "declare_end()")
    assert "declare_end()" not in s.legal_actions()
    play(s, "buy(Luxor)")
    assert s.get_var("cash")[0] == 5000
    s.apply("end_buy()")
    assert s.is_terminal()
    assert s.history[-1] == "end_buy()"
    assert s.get_var("hand")[0] == ["12I"] and s.get_var("bag") == bag
    # Luxor $1000: P0 10000; P1, P2 tied second: 5000 / 2. Tower $200: P2 2000, P1 1000.
    # Sales: P0 6 x 1000 (Festival is not on the board: worthless); P1 3000 + 200;
    # P2 3000 + 400.
    assert s.get_var("cash") == [5000 + 10000 + 6000, 6000 + 2500 + 1000 + 3200,
                                 6000 + 2500 + 2000 + 3400]
    assert shares_of(s, "Luxor") == [0, 0, 0] and shares_of(s, "Festival") == [3, 0, 0]
    assert s.get_var("bank")["Luxor"] == 25 and s.get_var("bank")["Tower"] == 25
    assert s.winners() == [0]


def test_declare_end_before_placing(load_rules):
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("A", 1, 11)}, hands={0: ["12I", "12G"]},
                 shares={0: {"Luxor": 2}, 1: {"Luxor": 1}})
    s.apply("declare_end()")
    assert s.legal_actions() == ["place(12G)", "place(12I)"]
    play(s, "place(12I)")
    assert "declare_end()" not in s.legal_actions()
    s.apply("end_buy()")
    assert s.is_terminal()
    assert s.get_var("cash") == [6000 + 7000 + 1400, 6000 + 3500 + 700, 6000]


def test_end_is_optional(load_rules):
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("A", 1, 11)}, hands={0: ["12I"]},
                 shares={1: {"Luxor": 1}})
    play(s, "place(12I)")
    assert "declare_end()" in s.legal_actions()
    s.apply("end_buy()")
    assert s.current_player == CHANCE
    assert "declare_end" in game.end_actions  # simulators take it as soon as legal


# ---------------------------------------------------------------------------- opening (U2)

def test_opening_closest_to_1a_starts(load_rules):
    game = load_rules("acquire")
    s = game.new_game(3)
    play(s, "draw_opening(5C)", "draw_opening(12A)", "draw_opening(1B)")
    assert s.get_var("board") == ["12A", "1B", "5C"] and s.get_var("loose") == s.get_var("board")
    # The deal starts with the first player (P1), six tiles each.
    for _ in range(18):
        s.apply(s.chance_outcomes()[0][0])
    hands = s.get_var("hand")
    assert hands[1] == row("A", 1, 6)
    assert hands[2] == row("A", 7, 11) + ["2B"]
    assert hands[0] == row("B", 3, 8)
    assert s.current_player == 1
    assert_tiles_conserved(s)


def test_opening_same_row_lowest_column_starts(load_rules):
    game = load_rules("acquire")
    s = game.new_game(2)
    play(s, "draw_opening(10B)", "draw_opening(3B)")
    while s.current_player == CHANCE:
        s.apply(s.chance_outcomes()[0][0])
    assert s.current_player == 1


def test_opening_tiles_stay_loose_and_found_nothing(load_rules):
    game = load_rules("acquire")
    s = game.new_game(2)
    play(s, "draw_opening(2A)", "draw_opening(1A)")
    assert s.get_var("loose") == ["1A", "2A"]
    assert set(s.get_var("size").values()) == {0}
    while s.current_player == CHANCE:
        s.apply(s.chance_outcomes()[-1][0])
    assert s.current_player == 1


def test_opening_tiles_back_to_bag(load_rules):
    game = load_rules("acquire", params={"opening_tiles_stay": False})
    s = game.new_game(2)
    s.apply("draw_opening(2A)")
    # The tile goes back only after everyone has drawn, so nobody draws it twice.
    assert "draw_opening(2A)" not in [o for o, _ in s.chance_outcomes()]
    s.apply("draw_opening(1A)")
    assert s.get_var("board") == [] and len(s.get_var("bag")) == 108
    while s.current_player == CHANCE:
        s.apply(s.chance_outcomes()[-1][0])
    assert s.current_player == 1 and len(s.get_var("bag")) == 96


# ---------------------------------------------------------------------------- protocol

def test_illegal_action_leaves_state_untouched(load_rules):
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": ["1A", "2A"]}, hands={0: ["12I"]},
                 shares={0: {"Luxor": 1}})
    d = s.digest()
    for bad in ["place(12A)", "place(1A)", "buy(Luxor)", "", "place(12I", "place(13Z)",
                "draw_tile(3C)", "end_buy()"]:
        with pytest.raises(IllegalAction):
            s.apply(bad)
        assert s.digest() == d
    with pytest.raises(IllegalAction):
        s.apply_index(len(s.legal_actions()))
    assert s.digest() == d
    play(s, "place(12I)", "end_buy()")
    d = s.digest()
    for bad in ["place(3C)", "draw_tile(12I)", "draw_tile(1A)", "buy(Luxor)"]:
        with pytest.raises(IllegalAction):
            s.apply(bad)
        assert s.digest() == d


def test_no_action_after_the_end(load_rules):
    game = load_rules("acquire")
    s = position(game, chains={"Luxor": row("A", 1, 11)}, hands={0: ["12I"]},
                 shares={1: {"Luxor": 1}})
    play(s, "declare_end()", "place(12I)", "end_buy()")
    assert s.is_terminal() and s.legal_actions() == []
    d = s.digest()
    with pytest.raises(IllegalAction):
        s.apply("end_buy()")
    assert s.digest() == d


def test_observation_hides_hands_bag_and_others_draws(load_rules):
    game = load_rules("acquire")
    s = game.new_game(3)
    play(s, "draw_opening(1A)", "draw_opening(12I)", "draw_opening(11I)")
    while s.current_player == CHANCE:
        s.apply(s.chance_outcomes()[0][0])
    hands = s.get_var("hand")
    for p in range(3):
        obs = s.observation(p)
        assert "bag" not in obs["vars"]
        assert obs["vars"]["hand"] == [h if q == p else None for q, h in enumerate(hands)]
        assert obs["vars"]["cash"] == [6000] * 3 and "shares" in obs["vars"]
        # Opening draws are public; the deal went P0, P1, P2, six each.
        assert obs["history"][:3] == s.history[:3]
        for q in range(3):
            seg = slice(3 + 6 * q, 9 + 6 * q)
            want = s.history[seg] if q == p else ["?"] * 6
            assert obs["history"][seg] == want
        assert ("legal_actions" in obs) == (p == 0)
        assert "locals" not in obs
        text = str(obs)
        for q in range(3):
            if q != p:
                assert not any(f"'draw_tile({t})'" in text for t in hands[q])
    assert s.observation(0)["legal_actions"] == s.legal_actions()
    # A placed tile is public.
    s.apply(s.legal_actions()[0])
    assert s.observation(1)["history"][-1] == s.history[-1]


def random_game(game, n: int, seed: int, max_steps: int = 10_000):
    rng = random.Random(seed)
    s = game.new_game(n)
    digests = [s.digest()]
    while not s.is_terminal() and len(s.history) < max_steps:
        if s.current_player == CHANCE:
            s.apply(rng.choice(s.chance_outcomes())[0])
        else:
            s.apply(rng.choice(s.legal_actions()))
        digests.append(s.digest())
    return s, digests


@pytest.mark.parametrize("n,seed", [(2, 1), (4, 7)])
def test_game_record_replays_to_same_digests(load_rules, n, seed):
    game = load_rules("acquire")
    s, digests = random_game(game, n, seed)
    assert s.is_terminal()
    replay = game.new_game(n)
    assert replay.digest() == digests[0]
    half = len(s.history) // 2
    branch = None
    for i, a in enumerate(s.history):
        if i == half:
            branch = replay.clone()
        replay.apply(a)
        assert replay.digest() == digests[i + 1], (i, a)
    assert replay.scores() == s.scores() and replay.winners() == s.winners()
    # A clone replays the rest to the same end, and moving it leaves its origin alone.
    mark = digests[half]
    assert branch.digest() == mark
    for a in s.history[half:]:
        branch.apply(a)
    assert branch.digest() == digests[-1]
    again = game.new_game(n)
    for a in s.history[:half]:
        again.apply(a)
    assert again.digest() == mark
