"""Workbench measurements for the issue note, each as ratios measured in one run.

    python bench/workbench.py [--games N] [--dask]

- the cost of `simulate --records` (default digest stride, and a digest after every action);
- the time of one MCTS move at the default budget, per game (3 players: mcts, greedy, random);
- local process pool with 1 and 2 jobs, and (with --dask) a local Dask cluster with 1 and 2
  workers, with a check that every run gives the same summary.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import rulelang
from rulelang import bots, sim

ROOT = Path(__file__).resolve().parent.parent
GAMES = {"acquire": 4, "poder": 3, "polanaftowe": 4}


def strip(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "timing"}


def timed(**kw) -> tuple[float, dict]:
    t = time.perf_counter()
    out = sim.simulate(backend="compiled", **kw)
    return time.perf_counter() - t, out


def records_cost(games: int) -> None:
    path = str(ROOT / "rules" / "acquire.rules")
    timed(path=path, players=4, games=2, seed=0)  # warm-up: parse, compile, cache
    with tempfile.TemporaryDirectory() as tmp:
        base, _ = timed(path=path, players=4, games=games, seed=1)
        strided, _ = timed(path=path, players=4, games=games, seed=1, records_dir=f"{tmp}/a")
        full, _ = timed(path=path, players=4, games=games, seed=1, records_dir=f"{tmp}/b",
                        digest_every=1)
    print(f"records, {games} Acquire games: none {base:.2f} s; default stride "
          f"{sim.RECORD_DIGEST_EVERY}: {strided:.2f} s ({strided / base:.2f}x); every action: "
          f"{full:.2f} s ({full / base:.2f}x)")


def mcts_move_time(moves: int = 20) -> None:
    for name, players in GAMES.items():
        players = 3
        game = rulelang.load(str(ROOT / "rules" / f"{name}.rules"), backend="compiled")
        rng = random.Random(5)
        state = game.new_game(players)
        bot = bots.MCTSBot(game, 0, seed=1)
        times = []
        while not state.is_terminal() and len(times) < moves:
            p = state.current_player
            if p == rulelang.CHANCE:
                state.apply_index(bots.chance_index(rng, state))
            elif p == 0:
                t = time.perf_counter()
                k = bot.choose(state)
                times.append(time.perf_counter() - t)
                state.apply_index(k)
            else:
                state.apply_index(rng.randrange(state.num_choices()))
        print(f"MCTS move at the default {bots.MCTS_DEFAULT_ITERATIONS} iterations, {name}: "
              f"median {statistics.median(times):.3f} s, max {max(times):.3f} s over "
              f"{len(times)} moves")


def scaling(games: int, with_dask: bool) -> None:
    path = str(ROOT / "rules" / "acquire.rules")
    t1, s1 = timed(path=path, players=4, games=games, seed=3)
    t2, s2 = timed(path=path, players=4, games=games, seed=3, jobs=2)
    print(f"local, {games} Acquire games: 1 job {t1:.2f} s, 2 jobs {t2:.2f} s "
          f"(speed-up {t1 / t2:.2f}x); same results: {strip(s1) == strip(s2)}")
    if not with_dask:
        return
    from distributed import LocalCluster

    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster:
            # A first small run loads the game on the workers.
            timed(path=path, players=4, games=2 * workers, seed=0,
                  scheduler=cluster.scheduler_address)
            td, sd = timed(path=path, players=4, games=games, seed=3,
                           scheduler=cluster.scheduler_address)
        print(f"dask, {workers} worker{'s' * (workers > 1)}: {td:.2f} s "
              f"({t1 / td:.2f}x the 1-job local run); same results: {strip(sd) == strip(s1)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1000,
                    help="games for the scaling runs (records use a tenth)")
    ap.add_argument("--dask", action="store_true")
    args = ap.parse_args()
    records_cost(max(2, args.games // 10))
    mcts_move_time()
    scaling(args.games, args.dask)


if __name__ == "__main__":
    main()
