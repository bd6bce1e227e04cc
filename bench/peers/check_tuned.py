"""Cross-check: bench/peers/acquire_tuned.py plays the same game as bench/peers/acquire_fast.py.

Both engines are instrumented by text substitution at load time (so the timed files stay as they
are): turns per game, mergers per game and the final cash of every player are returned next to
the decisions. Each engine plays N games (own seeds), and the means are compared in standard
errors of the difference (|z| < 3 expected for every statistic when the games are the same game).

Usage: python bench/peers/check_tuned.py [--games 2000] [--players 4] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics as st
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FAST = os.path.join(HERE, "acquire_fast.py")
TUNED = os.path.join(HERE, "acquire_tuned.py")


def _sub(src: str, a: str, b: str) -> str:
    assert src.count(a) == 1, a
    return src.replace(a, b)


def load_fast():
    with open(FAST, encoding="utf-8") as f:
        src = f.read()
    src = _sub(src, "    decisions = 0\n\n", "    decisions = 0\n    turns = mergers = 0\n\n")
    src = _sub(src, "    while True:\n        hand = hands[p]\n",
               "    while True:\n        turns += 1\n        hand = hands[p]\n")
    src = _sub(src, "                pending = adj & ~(1 << survivor)\n",
               "                pending = adj & ~(1 << survivor)\n                mergers += 1\n")
    src = _sub(src, "    return decisions\n", "    return decisions, turns, mergers, list(cash)\n")
    ns: dict = {"__name__": "fast_stats"}
    exec(compile(src, FAST, "exec"), ns)
    return lambda players, seed: ns["play"](players, random.Random(seed))


def load_tuned():
    with open(TUNED, encoding="utf-8") as f:
        src = f.read()
    n = src.count("# @stat ")
    assert n >= 3, n
    src = src.replace("# @stat ", "")
    src = _sub(src, "    return decisions  # @ret decisions, turns, mergers, cash\n",
               "    return decisions, turns, mergers, list(cash)\n")
    ns: dict = {"__name__": "tuned_stats"}
    exec(compile(src, TUNED, "exec"), ns)
    return lambda players, seed: ns["play"](players, random.Random(seed))


def stats(play, games: int, players: int, seed0: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in
                                   ("decisions", "turns", "mergers", "cash_max", "cash_min",
                                    "cash_total", "cash_seat0")}
    for i in range(games):
        d, t, m, cash = play(players, seed0 + i)
        out["decisions"].append(d)
        out["turns"].append(t)
        out["mergers"].append(m)
        out["cash_max"].append(max(cash))
        out["cash_min"].append(min(cash))
        out["cash_total"].append(sum(cash))
        out["cash_seat0"].append(cash[0])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0, help="offset added to both engines' seeds")
    args = ap.parse_args()
    # different seeds for the two engines: independent samples
    f = stats(load_fast(), args.games, args.players, 1_000_000 + args.seed)
    t = stats(load_tuned(), args.games, args.players, 2_000_000 + args.seed)
    worst = 0.0
    print(f"{args.games} games each, {args.players} players")
    print(f"{'statistic':12} {'fast mean':>11} {'tuned mean':>11} {'fast sd':>9} "
          f"{'tuned sd':>9} {'z':>6}")
    for k in f:
        mf, mt = st.fmean(f[k]), st.fmean(t[k])
        sf, stu = st.stdev(f[k]), st.stdev(t[k])
        se = math.sqrt(sf * sf / len(f[k]) + stu * stu / len(t[k]))
        z = (mt - mf) / se if se else 0.0
        worst = max(worst, abs(z))
        print(f"{k:12} {mf:11.2f} {mt:11.2f} {sf:9.2f} {stu:9.2f} {z:6.2f}")
    # distribution of decisions per game and of the winner's cash: deciles side by side
    for k in ("decisions", "turns", "cash_max"):
        qf = st.quantiles(f[k], n=10)
        qt = st.quantiles(t[k], n=10)
        print(f"{k} deciles fast : {[round(x) for x in qf]}")
        print(f"{k} deciles tuned: {[round(x) for x in qt]}")
    ok = worst < 4.0
    print(f"worst |z| = {worst:.2f} -> {'OK' if ok else 'MISMATCH'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
