"""Random-playout throughput, interpreter vs compiled, measured in one run on the same seeds.

Usage: python bench/playouts.py [--games N] [--interp-games M] [--players P[,P...]] [--variants]
                               [--json OUT] [FILES...]

--players takes one count or a list (each clamped to the file's range); --variants adds a row
per declared variant (e.g. Power Grid's two maps) instead of the file's defaults only.

Policy: uniform random legal action, except that an end declaration is taken as soon as it is
legal; chance sampled from Random(seed). Prints games/s and decisions/s for both back ends,
their ratio, peak memory of a game and the time to clone a mid-game state.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
import tracemalloc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import rulelang  # noqa: E402
from rulelang.sim import play_random_game  # noqa: E402


def run(game, players: int, seeds: range) -> dict:
    t0 = time.perf_counter()
    decisions = 0
    for seed in seeds:
        decisions += play_random_game(game, players, seed).decisions
    el = time.perf_counter() - t0
    return {"games": len(seeds), "seconds": el, "games_per_s": len(seeds) / el,
            "decisions_per_s": decisions / el, "decisions_per_game": decisions / len(seeds)}


def mid_game(game, players: int, seed: int = 1):
    import random

    rng = random.Random(seed)
    s = game.new_game(players)
    for _ in range(150):
        if s.is_terminal():
            break
        s.apply_index(rng.randrange(s.num_choices()))
    return s


def clone_us(state, reps: int = 2000) -> float:
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            state.clone()
        best = min(best, (time.perf_counter() - t0) / reps * 1e6)
    return best


def peak_kib(game, players: int) -> float:
    tracemalloc.start()
    play_random_game(game, players, 12345)
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--games", type=int, default=300, help="compiled games per file")
    ap.add_argument("--interp-games", type=int, default=10, help="interpreter games per file")
    ap.add_argument("--players", default="4", help="a player count or a list: 2,4,6")
    ap.add_argument("--variants", action="store_true", help="one row per declared variant")
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..",
                                                        "rules", "*.rules")))
    rows = []
    for path in files:
        t0 = time.perf_counter()
        rulelang.check_file(path)
        check_ms = (time.perf_counter() - t0) * 1000
        base = rulelang.load(path, backend="interpreter")
        variants = list(base.variants) if args.variants and base.variants else [None]
        counts = sorted({min(max(int(n), base.min_players), base.max_players)
                         for n in args.players.split(",")})
        for variant in variants:
            for players in counts:
                rows.append(_row(path, variant, players, check_ms, args))
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)


def _row(path: str, variant, players: int, check_ms: float, args) -> dict:
    interp = rulelang.load(path, variant=variant, backend="interpreter")
    comp = rulelang.load(path, variant=variant, backend="compiled")
    # Same seeds on both: the interpreter's games are the first of the compiled ones.
    ri = run(interp, players, range(args.interp_games))
    rc = run(comp, players, range(args.games))
    ri_same = run(comp, players, range(args.interp_games))
    row = {
        "file": os.path.relpath(path), "variant": variant, "players": players,
        "parse_check_ms": check_ms, "interpreter": ri, "compiled": rc,
        "ratio_games_per_s": rc["games_per_s"] / ri["games_per_s"],
        "ratio_same_seeds": ri["seconds"] / ri_same["seconds"],
        "clone_us_interpreter": clone_us(mid_game(interp, players), 200),
        "clone_us_compiled": clone_us(mid_game(comp, players)),
        "peak_kib_interpreter": peak_kib(interp, players),
        "peak_kib_compiled": peak_kib(comp, players),
    }
    label = f" {variant}" if variant else ""
    print(f"{row['file']}{label}  ({players} players; parse+check {check_ms:.0f} ms)")
    for name in ("interpreter", "compiled"):
        r = row[name]
        print(f"  {name:<12} {r['games_per_s']:9.1f} games/s {r['decisions_per_s']:11.0f} "
              f"decisions/s  ({r['games']} games, {r['decisions_per_game']:.0f} decisions"
              f"/game)  clone {row['clone_us_' + name]:.1f} us  peak "
              f"{row['peak_kib_' + name]:.0f} KiB")
    print(f"  compiled / interpreter: {row['ratio_games_per_s']:.1f}x games/s "
          f"({row['ratio_same_seeds']:.1f}x on the same {args.interp_games} seeds)")
    return row


if __name__ == "__main__":
    main()
