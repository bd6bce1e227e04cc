"""Compiled-engine throughput of this tree against another commit, measured in one run.

Usage: python bench/compare_commits.py REV [--games N] [--rounds R] [FILES...]

REV (a commit, tag or branch) is exported into a temporary folder with `git archive`. For each
rules file, both trees play the same seeds with the same policy (bench/playouts.py's: uniform
random, an end declaration taken at once), in fresh processes that alternate, R rounds each, so
that load on a shared machine hits both alike. Prints games/s per tree (best round) and the
ratio this/REV.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import rulelang
from rulelang.sim import play_random_game
game = rulelang.load(sys.argv[2], backend="compiled")
players, games = int(sys.argv[3]), int(sys.argv[4])
play_random_game(game, players, 0)
t0 = time.perf_counter()
for seed in range(1, games + 1):
    play_random_game(game, players, seed)
print(json.dumps({"games_per_s": games / (time.perf_counter() - t0)}))
"""


def measure(tree: str, path: str, players: int, games: int, cache: str) -> float:
    env = dict(os.environ, RULELANG_CACHE=cache, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", PROBE, tree, path, str(players), str(games)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)["games_per_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(HERE, "rules", "*.rules")))
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "old")
        os.mkdir(old)
        archive = subprocess.run(["git", "-C", HERE, "archive", args.rev, "rulelang"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
        print(f"{'rules file':<22} {args.rev[:12]:>12} {'this tree':>12} {'ratio':>7}")
        for path in files:
            import rulelang

            g = rulelang.load(path)
            players = min(max(args.players, g.min_players), g.max_players)
            best = {"old": 0.0, "new": 0.0}
            for _ in range(args.rounds):
                for name, tree in (("old", old), ("new", HERE)):
                    cache = os.path.join(tmp, "cache-" + name)
                    best[name] = max(best[name], measure(tree, path, players, args.games, cache))
            print(f"{os.path.basename(path):<22} {best['old']:>12.1f} {best['new']:>12.1f} "
                  f"{best['new'] / best['old']:>7.3f}")


if __name__ == "__main__":
    main()
