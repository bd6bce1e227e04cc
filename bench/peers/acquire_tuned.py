"""A tuned, stdlib-only Acquire playout engine: same game and policy as bench/peers/acquire_fast.py.

Usage: python bench/peers/acquire_tuned.py --games N --seed S [--players P]
Prints one JSON line: {"games": N, "seconds": T, "decisions": D}.

Same rules (rules/acquire.rules, default parameters) and the same random policy as acquire_fast.py:
every choice acquire_fast counts as a decision is a uniform draw over the same legal set (place a
playable tile or pass, found a free chain, break survivor / defunct-order ties, dispose (sell,
trade) pairs, buy an affordable chain or stop), the end declared as soon as legal, the game ending
when nobody can place a tile, dead tiles turned in. Draws are exact (getrandbits until below n);
a choice with a single option takes no draw. Random numbers are drawn in a different order, so
the games differ from acquire_fast's one by one, but not in distribution.

What makes it fast (callgrind instructions per game, games 207..406 of seed 7: acquire_fast
4.44M; this file 1.90M):
- one function, no closures, tables bound to locals, parameters as literals;
- the unplayable cells kept as board masks: `dead` (next to two safe chains; it only grows, so it
  is updated from the one chain that grew) and `f8` (would found an eighth chain, recomputed only
  while all seven chains are on the board); each hand also has a mask, so the place filter, the
  dead-tile turn-in, the dead check of a drawn tile and the stuck test are mask tests;
- adjacency from a padded 4-neighbour table and a chain bit per cell (sentinel cell 108), looked
  at only when the tile touches a chain; flood fill by whole-mask shifts, only when the tile
  touches a loose tile;
- prices kept per chain; the buy phase, when the options cannot change within it (cash for three
  of the dearest, three shares of each in the bank), is one uniform draw over n ** 3 read as
  three base-n digits (a table gives the decisions and the shares bought); otherwise the options
  are computed once and recomputed only when a purchase makes the cash or a bank run short;
- the opening and the deal (28 draws for 4 players) are one uniform draw below 108 * 107 * ...,
  read in mixed radix; a full hand is drawn from with getrandbits(3) directly; while the bag is
  not empty a hand is full at the start of its turn, so the refill is a single draw;
- the place decisions are counted at the end (tiles on the board - opening tiles + passes).
Tried and dropped: packing banks and holdings 8 bits a chain in one int (fewer bytecodes, but
the big-int operations cost more: +7% instructions).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from itertools import cycle

COLS, ROWS = 12, 9
NT = COLS * ROWS
FULL = (1 << NT) - 1
NCHAINS = 7
ALL_CHAINS = (1 << NCHAINS) - 1
TIER = (0, 0, 1, 1, 1, 2, 2)
START_CASH, SHARES, HAND, SAFE, END_SIZE, MAX_BUY = 6000, 25, 6, 11, 41, 3
MAJ, MIN = 10, 5

NOT_LAST = sum(1 << t for t in range(NT) if t % COLS != COLS - 1)   # may shift left by 1
NOT_FIRST = sum(1 << t for t in range(NT) if t % COLS != 0)         # may shift right by 1


def _nb(t: int) -> list[int]:
    r, c = divmod(t, COLS)
    out = []
    if r > 0:
        out.append(t - COLS)
    if r < ROWS - 1:
        out.append(t + COLS)
    if c > 0:
        out.append(t - 1)
    if c < COLS - 1:
        out.append(t + 1)
    return out


NB = tuple(sum(1 << j for j in _nb(t)) for t in range(NT))
N4 = tuple(tuple(_nb(t) + [NT] * (4 - len(_nb(t)))) for t in range(NT))   # padded with cell NT
CHAINS_IN = tuple(tuple(c for c in range(NCHAINS) if m >> c & 1) for m in range(1 << NCHAINS))
BIDX = tuple((m.bit_length() - 1) if m and not m & (m - 1) else -1 for m in range(1 << NCHAINS))
_BASE = [0, 0, 200, 300, 400, 500] + [600] * 5 + [700] * 10 + [800] * 10 + [900] * 10 + [1000] * 70
PRICE = tuple(tuple(_BASE[min(s, len(_BASE) - 1)] + 100 * TIER[c] for c in range(NCHAINS))
              for s in range(NT + 1))
BL = tuple(n.bit_length() for n in range(520))


def _buy_table() -> tuple:
    """BUY[m]: for a buy phase whose options stay the chains of m (and stop) for all three
    draws, the outcome of each K in range((len(m) + 1) ** 3), K's base-(n) digits being the three
    uniform draws: (decisions taken, ((chain, shares bought), ...))."""
    table = [()]
    intern: dict = {}
    for m in range(1, 1 << NCHAINS):
        ids = CHAINS_IN[m]
        n = len(ids) + 1
        row = []
        for k in range(n ** 3):
            digits = (k % n, k // n % n, k // (n * n))
            dec = 0
            bought: list[int] = []
            for dg in digits:
                dec += 1
                if dg == n - 1:
                    break
                bought.append(ids[dg])
            agg = tuple((c, bought.count(c)) for c in sorted(set(bought)))
            row.append(intern.setdefault((dec, agg), (dec, agg)))
        table.append(tuple(row))
    return tuple(table)


BUY = _buy_table()
# DEAL[players]: the number of ways to draw the opening tiles and the hands, one tile at a time
# (108 * 107 * ... over players * (1 + HAND) draws): one uniform draw below it, read in mixed radix,
# gives every one of those draws, exactly uniform
DEAL = tuple(__import__("math").prod(range(NT - n * (1 + HAND) + 1, NT + 1)) for n in range(9))
# ORDER[players][p]: the seats from p on, clockwise
ORDER = tuple(tuple(tuple((p + i) % n for i in range(n)) for p in range(n)) for n in range(9))
N3 = tuple((m.bit_count() + 1) ** 3 for m in range(1 << NCHAINS))
# DISP[held][bank of the survivor]: the (sell, trade) pairs, trade even, sell + trade <= held,
# trade // 2 <= bank
DISP = tuple(tuple(tuple((s, tr) for s in range(held + 1) for tr in range(0, held - s + 1, 2)
                         if tr // 2 <= bk)
                   for bk in range(SHARES + 1))
             for held in range(SHARES + 1))


def play(players: int, rng: random.Random) -> int:
    """One game; returns the number of decisions taken. The literals 6, 3, 11, 41, 12, 127 are
    HAND, MAX_BUY, SAFE, END_SIZE, COLS and ALL_CHAINS (LOAD_CONST is cheaper than a global)."""
    getrandbits = rng.getrandbits
    NB_ = NB
    N4_ = N4
    BL_ = BL
    PRICE_ = PRICE
    CHAINS_IN_ = CHAINS_IN
    BIDX_ = BIDX
    BUY_ = BUY
    N3_ = N3
    DISP_ = DISP
    NOT_LAST_ = NOT_LAST
    NOT_FIRST_ = NOT_FIRST
    FULL_ = FULL
    order = ORDER[players]

    cb = [0] * (NT + 1)               # the chain bit of each cell (cell NT: off the board)
    tiles_of = [0] * NCHAINS
    size = [0] * NCHAINS
    price = [0] * NCHAINS
    nbm = [0] * NCHAINS               # the cells next to each safe chain
    bank = [SHARES] * NCHAINS
    cash = [START_CASH] * players
    shares = [[0] * NCHAINS for _ in range(players)]
    hands = [[] for _ in range(players)]
    hmask = [0] * players
    bag = list(range(NT))
    loose = chained = 0
    active = safe = 0
    lowb = 0                          # chains with fewer than MAX_BUY shares in the bank
    empty = 0                         # chains with no share in the bank
    dead = 0                          # cells next to two safe chains (only grows)
    unpl = 0                          # cells not playable: dead | would found an eighth chain
    maxpa = maxpa3 = 0                # the dearest price among the active chains, and 3 times it
    decisions = passes = 0
    ending = False
    # @stat turns = mergers = 0

    # opening: each player draws a tile; the lowest starts; the tiles stay on the board as loose.
    # Then six tiles each from the first player on.
    top = DEAL[players]
    b = top.bit_length()
    kk = getrandbits(b)
    while kk >= top:
        kk = getrandbits(b)
    first, best = 0, NT
    for p in range(players):
        kk, k = divmod(kk, len(bag))
        t = bag.pop(k)
        if t < best:
            best, first = t, p
        loose |= 1 << t
    for q in order[first]:
        hand = hands[q]
        m = 0
        for _ in range(6):
            kk, k = divmod(kk, len(bag))
            t = bag.pop(k)
            hand.append(t)
            m |= 1 << t
        hmask[q] = m
    for p in cycle(order[first]):
        # @stat turns += 1
        hand = hands[p]
        hm = hmask[p]
        # ---- place (one decision per turn, counted at the end from the tiles on the board)
        if hm & unpl:
            ok = [t for t in hand if not unpl >> t & 1]
            n = len(ok)
            if n > 1:
                b = BL_[n]
                k = getrandbits(b)
                while k >= n:
                    k = getrandbits(b)
                t = ok[k]
                hand.remove(t)
            elif n:
                t = ok[0]
                hand.remove(t)
            else:
                t = -1
                passes += 1
        elif bag:
            # the bag is not empty: the hand is full
            k = getrandbits(3)
            while k >= 6:
                k = getrandbits(3)
            t = hand.pop(k)
        elif hand:
            n = len(hand)
            b = BL_[n]
            k = getrandbits(b)
            while k >= n:
                k = getrandbits(b)
            t = hand.pop(k)
        else:
            t = -1
            passes += 1
        if t >= 0:
            tb = 1 << t
            hm ^= tb
            if NB_[t] & chained:
                a0, a1, a2, a3 = N4_[t]
                adj = cb[a0] | cb[a1] | cb[a2] | cb[a3]
            else:
                adj = 0
            if not adj:
                if NB_[t] & loose:
                    # found a chain
                    within = loose | tb
                    seen = front = tb
                    while front:
                        front = (((front & NOT_LAST_) << 1) | ((front & NOT_FIRST_) >> 1)
                                 | (front << 12) | (front >> 12)) & within & ~seen
                        seen |= front
                    loose &= ~seen
                    free = CHAINS_IN_[127 & ~active]
                    n = len(free)
                    decisions += 1
                    if n > 1:
                        b = BL_[n]
                        k = getrandbits(b)
                        while k >= n:
                            k = getrandbits(b)
                        c = free[k]
                    else:
                        c = free[0]
                    bit = 1 << c
                    active |= bit
                    tiles_of[c] = seen
                    chained |= seen
                    sz = size[c] = seen.bit_count()
                    g = seen
                    while g:
                        lb = g & -g
                        g ^= lb
                        cb[lb.bit_length() - 1] = bit
                    if bank[c]:
                        bank[c] -= 1
                        shares[p][c] += 1
                        if bank[c] < 3:
                            lowb |= bit
                            if not bank[c]:
                                empty |= bit
                    pc = price[c] = PRICE_[sz][c]
                    if pc > maxpa:
                        maxpa = pc
                        maxpa3 = 3 * pc
                else:
                    loose |= tb
                    sz = 0
            elif adj & (adj - 1) == 0:
                # grow a chain
                c = BIDX_[adj]
                if NB_[t] & loose:
                    within = loose | tb
                    seen = front = tb
                    while front:
                        front = (((front & NOT_LAST_) << 1) | ((front & NOT_FIRST_) >> 1)
                                 | (front << 12) | (front >> 12)) & within & ~seen
                        seen |= front
                    loose &= ~seen
                    tiles_of[c] |= seen
                    chained |= seen
                    sz = size[c] = size[c] + seen.bit_count()
                    g = seen
                    while g:
                        lb = g & -g
                        g ^= lb
                        cb[lb.bit_length() - 1] = adj
                else:
                    tiles_of[c] |= tb
                    chained |= tb
                    sz = size[c] = size[c] + 1
                    cb[t] = adj
                pc = PRICE_[sz][c]
                if pc != price[c]:
                    price[c] = pc
                    if pc > maxpa:
                        maxpa = pc
                        maxpa3 = 3 * pc
            else:
                # @stat mergers += 1
                members = CHAINS_IN_[adj]
                biggest = max([size[x] for x in members])
                tops = [x for x in members if size[x] == biggest]
                n = len(tops)
                if n > 1:
                    b = BL_[n]
                    k = getrandbits(b)
                    while k >= n:
                        k = getrandbits(b)
                    c = tops[k]
                    decisions += 1
                else:
                    c = tops[0]
                bit = 1 << c
                defunct = adj & ~bit
                pending = defunct
                while pending:
                    members = CHAINS_IN_[pending]
                    if len(members) > 1:
                        top = max([size[x] for x in members])
                        tops = [x for x in members if size[x] == top]
                        n = len(tops)
                        if n > 1:
                            b = BL_[n]
                            k = getrandbits(b)
                            while k >= n:
                                k = getrandbits(b)
                            d = tops[k]
                            decisions += 1
                        else:
                            d = tops[0]
                    else:
                        d = members[0]
                    pending &= ~(1 << d)
                    pr = price[d]
                    col = [s[d] for s in shares]
                    srt = sorted(col)
                    most = srt[-1]
                    if not most:
                        continue
                    # bonuses for d
                    nmost = col.count(most)
                    second = srt[-2]
                    if nmost > 1 or not second:
                        mm = 100 * nmost
                        each = -(-(MAJ + MIN) * pr // mm) * mm // nmost
                        for q in range(players):
                            if col[q] == most:
                                cash[q] += each
                    else:
                        nsecond = col.count(second)
                        mm = 100 * nsecond
                        each = -(-MIN * pr // mm) * mm // nsecond
                        for q in range(players):
                            h = col[q]
                            if h == most:
                                cash[q] += MAJ * pr
                            elif h == second:
                                cash[q] += each
                    # disposal, from the placer on: (sell, trade) uniform over the legal pairs
                    for q in order[p]:
                        held = col[q]
                        if not held:
                            continue
                        opts = DISP_[held][bank[c]]
                        n = len(opts)
                        b = BL_[n]
                        k = getrandbits(b)
                        while k >= n:
                            k = getrandbits(b)
                        decisions += 1
                        sell, tr = opts[k]
                        if sell:
                            cash[q] += sell * pr
                        if sell or tr:
                            mine = shares[q]
                            mine[d] = held - sell - tr
                            bank[d] += sell + tr
                            if tr:
                                mine[c] += tr >> 1
                                bank[c] -= tr >> 1
                g = 0
                for d in CHAINS_IN_[defunct]:
                    g |= tiles_of[d]
                    size[c] += size[d]
                    tiles_of[d] = 0
                    size[d] = 0
                active &= ~defunct
                gg = g
                while gg:
                    lb = gg & -gg
                    gg ^= lb
                    cb[lb.bit_length() - 1] = bit
                within = loose | tb
                seen = front = tb
                while front:
                    front = (((front & NOT_LAST_) << 1) | ((front & NOT_FIRST_) >> 1)
                             | (front << 12) | (front >> 12)) & within & ~seen
                    seen |= front
                loose &= ~seen
                tiles_of[c] |= seen | g
                chained |= seen
                sz = size[c] = size[c] + seen.bit_count()
                gg = seen
                while gg:
                    lb = gg & -gg
                    gg ^= lb
                    cb[lb.bit_length() - 1] = bit
                price[c] = PRICE_[sz][c]
                lowb &= ~adj
                empty &= ~adj
                for x in CHAINS_IN_[adj]:
                    if bank[x] < 3:
                        lowb |= 1 << x
                        if not bank[x]:
                            empty |= 1 << x
                maxpa = 0
                for x in CHAINS_IN_[active]:
                    if price[x] > maxpa:
                        maxpa = price[x]
                maxpa3 = 3 * maxpa
                unpl = dead
            if sz >= 11:
                # c is safe: the cells next to it and another safe chain are dead
                bit = 1 << c
                m = tiles_of[c]
                m = (((m & NOT_LAST_) << 1) | ((m & NOT_FIRST_) >> 1) | (m << 12)
                     | (m >> 12)) & FULL_
                others = safe & ~bit
                safe |= bit
                if others:
                    o = 0
                    for x in CHAINS_IN_[others]:
                        o |= nbm[x]
                    dead |= m & o
                    unpl = dead
                nbm[c] = m
                if sz >= 41 or active == safe:
                    # the end, declared at once; the turn goes on with the buys
                    decisions += 1
                    ending = True
            if active == 127:
                m = chained
                m = ((m & NOT_LAST_) << 1) | ((m & NOT_FIRST_) >> 1) | (m << 12) | (m >> 12)
                f8 = loose
                f8 = ((f8 & NOT_LAST_) << 1) | ((f8 & NOT_FIRST_) >> 1) | (f8 << 12) | (f8 >> 12)
                unpl = dead | (f8 & ~m & FULL_)
        # ---- buy up to three shares
        if active:
            cp = cash[p]
            shp = shares[p]
            if cp >= maxpa3 and not active & lowb:
                # the options stay the same for all three draws: one draw over n ** 3
                n = N3_[active]
                b = BL_[n]
                k = getrandbits(b)
                while k >= n:
                    k = getrandbits(b)
                dec, buys = BUY_[active][k]
                decisions += dec
                for x, cnt in buys:
                    cp -= cnt * price[x]
                    shp[x] += cnt
                    bk = bank[x] = bank[x] - cnt
                    if bk < 3:
                        lowb |= 1 << x
                        if not bk:
                            empty |= 1 << x
            else:
                if cp >= maxpa:
                    ok = CHAINS_IN_[active & ~empty]
                    mp = maxpa
                else:
                    ok = [x for x in CHAINS_IN_[active & ~empty] if cp >= price[x]]
                    mp = 0
                    for x in ok:
                        if price[x] > mp:
                            mp = price[x]
                bought = 0
                while ok:
                    decisions += 1
                    n = len(ok) + 1
                    b = BL_[n]
                    k = getrandbits(b)
                    while k >= n:
                        k = getrandbits(b)
                    if k == n - 1:
                        break
                    x = ok[k]
                    cp -= price[x]
                    shp[x] += 1
                    bought += 1
                    bk = bank[x] = bank[x] - 1
                    if bk < 3:
                        lowb |= 1 << x
                        if not bk:
                            empty |= 1 << x
                            if bought == 3:
                                break
                            ok = [y for y in ok if bank[y] and cp >= price[y]]
                            mp = 0
                            for y in ok:
                                if price[y] > mp:
                                    mp = price[y]
                            continue
                    if bought == 3:
                        break
                    if cp < mp:
                        ok = [y for y in ok if cp >= price[y]]
                        mp = 0
                        for y in ok:
                            if price[y] > mp:
                                mp = price[y]
            cash[p] = cp
        if ending:
            break
        # ---- turn in dead tiles, draw back to six. While the bag is not empty every hand is
        # full at the start of its turn, so a turn that placed a tile and turned in none draws
        # exactly one tile (more only if that one is dead).
        if hm & dead:
            for t in hand[:]:
                if dead >> t & 1:
                    hand.remove(t)
                    hm ^= 1 << t
            while len(hand) < 6 and bag:
                n = len(bag)
                b = BL_[n]
                k = getrandbits(b)
                while k >= n:
                    k = getrandbits(b)
                t = bag.pop(k)
                if dead >> t & 1:
                    continue
                hand.append(t)
                hm |= 1 << t
        elif bag and t >= 0:
            n = len(bag)
            b = BL_[n]
            k = getrandbits(b)
            while k >= n:
                k = getrandbits(b)
            t = bag.pop(k)
            if dead >> t & 1:
                while bag:
                    n = len(bag)
                    b = BL_[n]
                    k = getrandbits(b)
                    while k >= n:
                        k = getrandbits(b)
                    t = bag.pop(k)
                    if not dead >> t & 1:
                        hand.append(t)
                        hm |= 1 << t
                        break
            else:
                hand.append(t)
                hm |= 1 << t
        hmask[p] = hm
        # ---- the end as if declared: nobody can place, and nobody can draw
        if unpl or not bag:
            for m in hmask:
                if m & ~unpl:
                    break
            else:
                if not bag:
                    break
                for q in range(players):
                    if len(hands[q]) < 6 or hmask[q] & dead:
                        break
                else:
                    break
    decisions += (loose | chained).bit_count() - players + passes
    # the final payout: the merger's bonus code again, written out (this file is one function
    # on purpose: no calls, no closures), then each share at the chain's price
    for c in CHAINS_IN_[active]:
        pr = price[c]
        col = [s[c] for s in shares]
        srt = sorted(col)
        most = srt[-1]
        if most:
            nmost = col.count(most)
            second = srt[-2]
            if nmost > 1 or not second:
                mm = 100 * nmost
                each = -(-(MAJ + MIN) * pr // mm) * mm // nmost
                for q in range(players):
                    if col[q] == most:
                        cash[q] += each
            else:
                nsecond = col.count(second)
                mm = 100 * nsecond
                each = -(-MIN * pr // mm) * mm // nsecond
                for q in range(players):
                    h = col[q]
                    if h == most:
                        cash[q] += MAJ * pr
                    elif h == second:
                        cash[q] += each
            for q in range(players):
                cash[q] += col[q] * pr
    return decisions  # @ret decisions, turns, mergers, cash


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--players", type=int, default=4)
    args = ap.parse_args()
    decisions = 0
    Random = random.Random
    players = args.players
    t0 = time.perf_counter()
    for i in range(args.games):
        decisions += play(players, Random(args.seed + i))
    el = time.perf_counter() - t0
    print(json.dumps({"games": args.games, "seconds": el, "decisions": decisions}))


if __name__ == "__main__":
    main()
