"""A hand-tuned, stdlib-only Acquire playout engine: the speed reference for bench/playouts.py.

Usage: python bench/peers/acquire_fast.py --games N --seed S [--players P]
Prints one JSON line: {"games": N, "seconds": T, "decisions": D} (the peer protocol of
bench/playouts.py; T covers the games only, not the start of the process).

What it is for: a figure of what plain Python can do on this game when written by hand (a flat
integer board, bit masks for the tile sets, no per-step allocation, the policy inlined), so that
the compiled engine's throughput is measured against it in one run. It is a speed reference, not
a second implementation of rules/acquire.rules: it follows the same rules (rules/acquire.rules
with its default parameters: opening tiles stay, dead tiles turned in, the end declared as soon as
it is legal, the game ending when nobody can place a tile) and the same random policy (uniform
over the legal choices, an end declaration taken at once), but it draws its random numbers in its
own order, so its games are not rulelang's games, only games of the same length and shape.
"""

from __future__ import annotations

import argparse
import json
import random
import time

COLS, ROWS = 12, 9
NT = COLS * ROWS
NCHAINS = 7
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
# price of a chain by (size, chain): base price by size plus 100 per tier
_BASE = [0, 0, 200, 300, 400, 500] + [600] * 5 + [700] * 10 + [800] * 10 + [900] * 10 + [1000] * 70
PRICE = tuple(tuple(_BASE[min(s, len(_BASE) - 1)] + 100 * TIER[c] for c in range(NCHAINS))
              for s in range(NT + 1))


def bits(m: int) -> list[int]:
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


def connected(t: int, within: int) -> int:
    """The tiles of `within` joined to t (t included)."""
    seen = 1 << t
    front = seen
    while front:
        nb = 0
        for x in bits(front):
            nb |= NB[x]
        front = nb & within & ~seen
        seen |= front
    return seen


def play(players: int, rng: random.Random) -> int:
    """One game; returns the number of decisions taken."""
    randrange = rng.randrange
    chain_of = [-1] * NT
    size = [0] * NCHAINS
    bank = [SHARES] * NCHAINS
    cash = [START_CASH] * players
    shares = [[0] * NCHAINS for _ in range(players)]
    hands = [[] for _ in range(players)]
    bag = list(range(NT))
    board = loose = 0
    decisions = 0

    def draw() -> int:
        k = randrange(len(bag))
        t = bag[k]
        bag[k] = bag[-1]
        bag.pop()
        return t

    def adjacent(t: int) -> list[int]:
        out = []
        for n in NBL[t]:
            c = chain_of[n]
            if c >= 0 and c not in out:
                out.append(c)
        return out

    def dead(t: int) -> bool:
        if nsafe < 2:
            return False
        k = 0
        for c in adjacent(t):
            if size[c] >= SAFE:
                k += 1
        return k >= 2

    def playable(t: int) -> bool:
        # with no safe chain and a chain free, every tile is playable (the usual case)
        if easy:
            return True
        adj = adjacent(t)
        k = 0
        for c in adj:
            if size[c] >= SAFE:
                k += 1
        if k >= 2:
            return False
        if not adj and NB[t] & loose and 0 not in size:
            return False
        return True

    def can_end() -> bool:
        active = False
        all_safe = True
        for s in size:
            if s >= END_SIZE:
                return True
            if s:
                active = True
                if s < SAFE:
                    all_safe = False
        return active and all_safe

    def bonuses(c: int) -> None:
        pr = PRICE[size[c]][c]
        held = [(shares[q][c], q) for q in range(players) if shares[q][c] > 0]
        if not held:
            return
        most = max(h for h, _q in held)
        firsts = [q for h, q in held if h == most]
        rest = [h for h, _q in held if h < most]
        if len(firsts) > 1 or not rest:
            m = 100 * len(firsts)
            each = -(-(MAJ + MIN) * pr // m) * m // len(firsts)
            for q in firsts:
                cash[q] += each
        else:
            cash[firsts[0]] += MAJ * pr
            second = max(rest)
            seconds = [q for h, q in held if h == second]
            m = 100 * len(seconds)
            each = -(-MIN * pr // m) * m // len(seconds)
            for q in seconds:
                cash[q] += each

    nsafe = 0
    # opening: each player draws a tile; the lowest starts; the tiles stay on the board as loose
    first, best = 0, NT
    for p in range(players):
        t = draw()
        if t < best:
            best, first = t, p
        board |= 1 << t
        loose |= 1 << t
    for i in range(players):
        p = (first + i) % players
        hand = hands[p]
        while len(hand) < HAND:
            t = draw()
            if dead(t):
                continue
            hand.append(t)
    p = first
    ending = False
    while True:
        hand = hands[p]
        easy = 0 in size and max(size) < SAFE
        ce = can_end()
        # place (an end declaration comes first when it is legal)
        placed = False
        while not placed:
            if not ending and ce:
                ending = True
                decisions += 1
                continue
            ok = hand[:] if easy else [t for t in hand if playable(t)]
            decisions += 1
            if not ok:
                placed = True
                break
            t = ok[randrange(len(ok))]
            hand.remove(t)
            tb = 1 << t
            board |= tb
            loose |= tb
            adj = adjacent(t)
            if not adj:
                group = connected(t, loose)
                if group != tb:
                    free = [c for c in range(NCHAINS) if size[c] == 0]
                    c = free[randrange(len(free))]
                    decisions += 1
                    for x in bits(group):
                        chain_of[x] = c
                    size[c] += group.bit_count()
                    loose &= ~group
                    if bank[c] > 0:
                        bank[c] -= 1
                        shares[p][c] += 1
            elif len(adj) == 1:
                c = adj[0]
                group = connected(t, loose)
                for x in bits(group):
                    chain_of[x] = c
                size[c] += group.bit_count()
                loose &= ~group
            else:
                biggest = max(size[c] for c in adj)
                tops = [c for c in adj if size[c] == biggest]
                if len(tops) > 1:
                    survivor = tops[randrange(len(tops))]
                    decisions += 1
                else:
                    survivor = tops[0]
                pending = [c for c in adj if c != survivor]
                while pending:
                    top = max(size[c] for c in pending)
                    tops = [c for c in pending if size[c] == top]
                    if len(tops) > 1:
                        d = tops[randrange(len(tops))]
                        decisions += 1
                    else:
                        d = tops[0]
                    pending.remove(d)
                    bonuses(d)
                    pr = PRICE[size[d]][d]
                    for i in range(players):
                        q = (p + i) % players
                        held = shares[q][d]
                        if held <= 0:
                            continue
                        # (sell, trade) pairs with trade even, sell + trade <= held and
                        # trade // 2 <= the survivor's bank, in the listing order
                        tmax = min(held, 2 * bank[survivor]) // 2
                        count = 0
                        for tr in range(tmax + 1):
                            count += held - 2 * tr + 1
                        k = randrange(count)
                        decisions += 1
                        tr = 0
                        # the k-th pair in (sell, trade) order: sell outer, trade inner
                        for sell in range(held + 1):
                            n = min(held - sell, 2 * bank[survivor]) // 2 + 1
                            if k < n:
                                tr = 2 * k
                                break
                            k -= n
                        cash[q] += sell * pr
                        shares[q][d] -= sell + tr
                        bank[d] += sell + tr
                        shares[q][survivor] += tr // 2
                        bank[survivor] -= tr // 2
                moved = 0
                for x in bits(board):
                    c = chain_of[x]
                    if c >= 0 and c != survivor and c in adj:
                        size[c] -= 1
                        chain_of[x] = survivor
                        moved += 1
                size[survivor] += moved
                group = connected(t, loose)
                for x in bits(group):
                    chain_of[x] = survivor
                size[survivor] += group.bit_count()
                loose &= ~group
            placed = True
            nsafe = 0
            for c in range(NCHAINS):
                if size[c] >= SAFE:
                    nsafe += 1
            ce = can_end()
        # buy up to three shares
        bought = 0
        mine = shares[p]
        while bought < MAX_BUY:
            if not ending and ce:
                ending = True
                decisions += 1
                continue
            cp = cash[p]
            ok = [c for c in range(NCHAINS) if size[c] and bank[c] and cp >= PRICE[size[c]][c]]
            if not ok:
                break
            decisions += 1
            k = randrange(len(ok) + 1)
            if k == len(ok):
                break
            c = ok[k]
            cash[p] -= PRICE[size[c]][c]
            bank[c] -= 1
            mine[c] += 1
            bought += 1
        if ending:
            break
        easy = 0 in size and max(size) < SAFE
        if max(size) >= SAFE:
            keep = [t for t in hand if not dead(t)]
            hand[:] = keep
        while len(hand) < HAND and bag:
            t = draw()
            if dead(t):
                continue
            hand.append(t)
        if easy:
            p = (p + 1) % players
            continue
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
                if len(h) < HAND or any(dead(t) for t in h):
                    stuck = False
                    break
        if stuck:
            break
        p = (p + 1) % players
    for c in range(NCHAINS):
        if size[c]:
            bonuses(c)
    for q in range(players):
        for c in range(NCHAINS):
            if size[c]:
                cash[q] += shares[q][c] * PRICE[size[c]][c]
                bank[c] += shares[q][c]
                shares[q][c] = 0
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
