"""The compiled playout kernel against the hand-tuned Acquire peer, timed in one process.

Usage: python bench/peer_inprocess.py [--players P] [--games N] [--rounds R] [--peer FILE]

bench/playouts.py --peer runs the peer as a separate command (any engine can be one), and on a
busy shared machine fresh processes differ by tens of percent. This script loads both into one
process instead: the generated module of rules/acquire.rules (its `playout` kernel with the
benchmark's policy, "random_end") and the peer's `play` (bench/peers/acquire_fast.py, or with
--peer bench/peers/acquire_tuned.py, the faster of the two hand-tuned engines). It alternates R
rounds of N games each, in both orders, and prints each one's best games/s. It also prints the
median of the rounds' ratios kernel/peer, which is the issue's ratio to the hand-tuned engine.
The two play games of the same length and shape but not the same games (the peer draws its
random numbers in its own order).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--peer", default=os.path.join("bench", "peers", "acquire_fast.py"),
                    help="the peer's file (a `play(players, rng)` function): acquire_fast.py, "
                         "or acquire_tuned.py (about twice as fast)")
    args = ap.parse_args()
    import rulelang
    from rulelang.codegen import compile_program

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "acquire_engine.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(compile_program(rulelang.check_file(os.path.join(HERE, "rules",
                                                                     "acquire.rules"))))
        engine = load(path, "acquire_engine")
    peer = load(os.path.join(HERE, args.peer), "peer")
    n, p = args.games, args.players

    def kernel(seed: int) -> float:
        states = [engine.new_game(p) for _ in range(n)]
        t0 = time.perf_counter()
        for i, s in enumerate(states):
            engine.playout(s, random.Random(seed + i), "random_end")
        return time.perf_counter() - t0

    def hand_tuned(seed: int) -> float:
        t0 = time.perf_counter()
        for i in range(n):
            peer.play(p, random.Random(seed + i))
        return time.perf_counter() - t0

    kernel(0), hand_tuned(0)  # warm up both
    times: dict[str, list[float]] = {"kernel": [], "peer": []}
    for r in range(args.rounds):
        order = (("kernel", kernel), ("peer", hand_tuned))
        for name, fn in order if r % 2 == 0 else order[::-1]:
            times[name].append(fn(1000 * (r + 1)))
    ratio = statistics.median(pt / kt for kt, pt in zip(times["kernel"], times["peer"]))
    print(f"Acquire, {p} players, {args.rounds} rounds of {n} games, one process")
    print(f"  kernel  {n / min(times['kernel']):8.0f} games/s")
    print(f"  peer    {n / min(times['peer']):8.0f} games/s ({args.peer})")
    print(f"  kernel/peer {ratio:.3f} (median of the rounds' ratios)")


if __name__ == "__main__":
    main()
