"""A hand-tuned, stdlib-only Acquire playout engine: the speed reference for bench/playouts.py.

Usage: python bench/peers/acquire_fast.py --games N --seed S [--players P]
Prints one JSON line: {"games": N, "seconds": T, "decisions": D} (the peer protocol of
bench/playouts.py; T covers the games only, not the start of the process).

What it is for: a figure of what plain Python can do on this game when written by hand, so that
the compiled engine's throughput is measured against it in one run. It is written the way the
issue's hand-tuned engine is described: a flat integer board, bit masks for the tile sets and the
chain sets, counters kept as the game goes (active and safe chains, the tiles of each chain), no
per-step allocation on the hot paths, the policy and the random draws inlined (random's own
randrange algorithm, getrandbits until below n, without its two Python frames). It is a speed
reference, not a second implementation of rules/acquire.rules: it follows the same rules
(rules/acquire.rules with its default parameters: opening tiles stay, dead tiles turned in, the
end declared as soon as it is legal, the game ending when nobody can place a tile) and the same
random policy (uniform over the legal choices, an end declaration taken at once), but it draws
its random numbers in its own order, so its games are not rulelang's games, only games of the
same length and shape (decisions per game are printed so that the two can be compared).
"""

from __future__ import annotations

import argparse
import json
import random
import time

COLS, ROWS = 12, 9
NT = COLS * ROWS
NCHAINS = 7
ALL_CHAINS = (1 << NCHAINS) - 1
TIER = (0, 0, 1, 1, 1, 2, 2)
START_CASH, SHARES, HAND, SAFE, END_SIZE, MAX_BUY = 6000, 25, 6, 11, 41, 3
MAJ, MIN = 10, 5


def _neighbor_masks() -> tuple[int, ...]:
    out = []
    for t in range(NT):
        r, c = divmod(t, COLS)
        m = 0
        if r > 0:
            m |= 1 << (t - COLS)
        if r < ROWS - 1:
            m |= 1 << (t + COLS)
        if c > 0:
            m |= 1 << (t - 1)
        if c < COLS - 1:
            m |= 1 << (t + 1)
        out.append(m)
    return tuple(out)


NB = _neighbor_masks()
NBL = tuple(tuple(j for j in range(NT) if NB[t] >> j & 1) for t in range(NT))
# the members of every set of chains, ascending
CHAINS_IN = tuple(tuple(c for c in range(NCHAINS) if m >> c & 1) for m in range(1 << NCHAINS))
# price of a chain by (size, chain): base price by size plus 100 per tier
_BASE = [0, 0, 200, 300, 400, 500] + [600] * 5 + [700] * 10 + [800] * 10 + [900] * 10 + [1000] * 70
PRICE = tuple(tuple(_BASE[min(s, len(_BASE) - 1)] + 100 * TIER[c] for c in range(NCHAINS))
              for s in range(NT + 1))


def play(players: int, rng: random.Random) -> int:
    """One game; returns the number of decisions taken."""
    getrandbits = rng.getrandbits
    chain_of = [-1] * NT
    tiles_of = [0] * NCHAINS          # the tiles of each chain (bit masks)
    size = [0] * NCHAINS
    bank = [SHARES] * NCHAINS
    cash = [START_CASH] * players
    shares = [[0] * NCHAINS for _ in range(players)]
    hands: list[list[int]] = [[] for _ in range(players)]
    bag = list(range(NT))
    board = loose = chained = 0
    active = safe = 0                 # chains on the board; chains of SAFE tiles or more
    decisions = 0

    def below(n: int) -> int:
        b = n.bit_length()
        k = getrandbits(b)
        while k >= n:
            k = getrandbits(b)
        return k

    def adjacent(t: int) -> int:
        """The chains next to t, as a mask."""
        m = 0
        if NB[t] & chained:
            for x in NBL[t]:
                c = chain_of[x]
                if c >= 0:
                    m |= 1 << c
        return m

    def playable(t: int) -> bool:
        adj = adjacent(t)
        if adj:
            return (adj & safe).bit_count() < 2
        return not (NB[t] & loose and active == ALL_CHAINS)

    def connected(t: int, within: int) -> int:
        seen = front = 1 << t
        while front:
            nb = 0
            while front:
                low = front & -front
                front ^= low
                nb |= NB[low.bit_length() - 1]
            front = nb & within & ~seen
            seen |= front
        return seen

    def join(c: int, group: int) -> None:
        """The tiles of group (loose tiles and the tile placed) join chain c."""
        nonlocal loose, chained
        tiles_of[c] |= group
        chained |= group
        loose &= ~group
        size[c] += group.bit_count()
        while group:
            low = group & -group
            group ^= low
            chain_of[low.bit_length() - 1] = c

    def bonuses(c: int) -> None:
        pr = PRICE[size[c]][c]
        most = second = nmost = nsecond = 0
        for q in range(players):
            h = shares[q][c]
            if h > most:
                second, nsecond = most, nmost
                most, nmost = h, 1
            elif h == most and h:
                nmost += 1
            elif h > second:
                second, nsecond = h, 1
            elif h == second and h:
                nsecond += 1
        if not most:
            return
        if nmost > 1 or not second:
            m = 100 * nmost
            each = -(-(MAJ + MIN) * pr // m) * m // nmost
            for q in range(players):
                if shares[q][c] == most:
                    cash[q] += each
        else:
            m = 100 * nsecond
            each = -(-MIN * pr // m) * m // nsecond
            for q in range(players):
                h = shares[q][c]
                if h == most:
                    cash[q] += MAJ * pr
                elif h == second:
                    cash[q] += each

    # opening: each player draws a tile; the lowest starts; the tiles stay on the board as loose
    first, best = 0, NT
    for p in range(players):
        k = below(len(bag))
        t = bag[k]
        bag[k] = bag[-1]
        bag.pop()
        if t < best:
            best, first = t, p
        board |= 1 << t
        loose |= 1 << t
    for i in range(players):
        hand = hands[(first + i) % players]
        while len(hand) < HAND:
            n = len(bag)
            b = n.bit_length()
            k = getrandbits(b)
            while k >= n:
                k = getrandbits(b)
            hand.append(bag[k])
            bag[k] = bag[-1]
            bag.pop()
    p = first
    ending = False
    can_end = False
    while True:
        hand = hands[p]
        # place (an end declaration comes first when it is legal)
        if can_end and not ending:
            ending = True
            decisions += 1
        decisions += 1
        if safe or active == ALL_CHAINS:
            ok = [t for t in hand if playable(t)]
        else:
            ok = hand  # no safe chain and a chain free: every tile is playable
        n = len(ok)
        if n:
            b = n.bit_length()
            k = getrandbits(b)
            while k >= n:
                k = getrandbits(b)
            t = ok[k]
            hand.remove(t)
            tb = 1 << t
            board |= tb
            loose |= tb
            adj = adjacent(t)
            if not adj:
                group = connected(t, loose)
                if group != tb:
                    free = CHAINS_IN[ALL_CHAINS & ~active]
                    n = len(free)
                    b = n.bit_length()
                    k = getrandbits(b)
                    while k >= n:
                        k = getrandbits(b)
                    c = free[k]
                    decisions += 1
                    join(c, group)
                    if bank[c]:
                        bank[c] -= 1
                        shares[p][c] += 1
            elif adj & (adj - 1) == 0:
                join(adj.bit_length() - 1, connected(t, loose))
            else:
                biggest = max([size[c] for c in CHAINS_IN[adj]])
                tops = [c for c in CHAINS_IN[adj] if size[c] == biggest]
                if len(tops) > 1:
                    survivor = tops[below(len(tops))]
                    decisions += 1
                else:
                    survivor = tops[0]
                pending = adj & ~(1 << survivor)
                while pending:
                    top = max([size[c] for c in CHAINS_IN[pending]])
                    tops = [c for c in CHAINS_IN[pending] if size[c] == top]
                    if len(tops) > 1:
                        d = tops[below(len(tops))]
                        decisions += 1
                    else:
                        d = tops[0]
                    pending &= ~(1 << d)
                    bonuses(d)
                    pr = PRICE[size[d]][d]
                    for i in range(players):
                        q = (p + i) % players
                        mine = shares[q]
                        held = mine[d]
                        if not held:
                            continue
                        # (sell, trade) pairs with trade even, sell + trade <= held and
                        # trade // 2 <= the survivor's bank, in the listing order (sell outer)
                        cap = 2 * bank[survivor]
                        count = 0
                        for sell in range(held + 1):
                            r = held - sell
                            count += (r if r < cap else cap) // 2 + 1
                        k = below(count)
                        decisions += 1
                        for sell in range(held + 1):
                            r = held - sell
                            n = (r if r < cap else cap) // 2 + 1
                            if k < n:
                                break
                            k -= n
                        tr = 2 * k
                        cash[q] += sell * pr
                        mine[d] -= sell + tr
                        bank[d] += sell + tr
                        mine[survivor] += tr // 2
                        bank[survivor] -= tr // 2
                for d in CHAINS_IN[adj & ~(1 << survivor)]:
                    g = tiles_of[d]
                    tiles_of[d] = 0
                    size[d] = 0
                    size[survivor] += g.bit_count()
                    tiles_of[survivor] |= g
                    while g:
                        low = g & -g
                        g ^= low
                        chain_of[low.bit_length() - 1] = survivor
                join(survivor, connected(t, loose))
            # the kept counters: chains on the board, safe chains, whether the end is legal
            active = safe = 0
            can_end = False
            for c in range(NCHAINS):
                sz = size[c]
                if sz:
                    active |= 1 << c
                    if sz >= SAFE:
                        safe |= 1 << c
                        if sz >= END_SIZE:
                            can_end = True
            if active and active == safe:
                can_end = True
        # buy up to three shares
        if can_end and not ending:
            ending = True
            decisions += 1
        bought = 0
        mine = shares[p]
        while bought < MAX_BUY:
            cp = cash[p]
            ok = [c for c in CHAINS_IN[active] if bank[c] and cp >= PRICE[size[c]][c]]
            if not ok:
                break
            decisions += 1
            n = len(ok) + 1
            b = n.bit_length()
            k = getrandbits(b)
            while k >= n:
                k = getrandbits(b)
            if k == n - 1:
                break
            c = ok[k]
            cash[p] = cp - PRICE[size[c]][c]
            bank[c] -= 1
            mine[c] += 1
            bought += 1
        if ending:
            break
        if safe & (safe - 1):  # two safe chains: dead tiles are possible
            for t in hand[:]:
                if (adjacent(t) & safe).bit_count() >= 2:
                    hand.remove(t)
        while len(hand) < HAND and bag:
            n = len(bag)
            b = n.bit_length()
            k = getrandbits(b)
            while k >= n:
                k = getrandbits(b)
            t = bag[k]
            bag[k] = bag[-1]
            bag.pop()
            if safe & (safe - 1) and (adjacent(t) & safe).bit_count() >= 2:
                continue
            hand.append(t)
        if safe or active == ALL_CHAINS:
            # the end as if declared: nobody can place, and nobody can draw
            stuck = True
            for h in hands:
                for t in h:
                    if playable(t):
                        stuck = False
                        break
                if not stuck:
                    break
            if stuck and bag:
                for h in hands:
                    if len(h) < HAND or any((adjacent(t) & safe).bit_count() >= 2 for t in h):
                        stuck = False
                        break
            if stuck:
                break
        p = (p + 1) % players
    for c in CHAINS_IN[active]:
        bonuses(c)
    for q in range(players):
        mine = shares[q]
        for c in CHAINS_IN[active]:
            cash[q] += mine[c] * PRICE[size[c]][c]
            bank[c] += mine[c]
            mine[c] = 0
    return decisions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--players", type=int, default=4)
    args = ap.parse_args()
    decisions = 0
    t0 = time.perf_counter()
    for i in range(args.games):
        decisions += play(args.players, random.Random(args.seed + i))
    el = time.perf_counter() - t0
    print(json.dumps({"games": args.games, "seconds": el, "decisions": decisions}))


if __name__ == "__main__":
    main()
