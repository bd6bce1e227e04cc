"""How much of a compiled game's time through the engine protocol is the protocol's floor, this
tree against another commit, measured in one process.

Usage: python bench/floor.py [FILES...] [--baseline REV] [--players N] [--games G] [--rounds R]

The floor is the time a step costs when the rules do nothing: a built-in game of three
parameterless options per player turn and one counter (TRIVIAL below), played by
compare_commits.py's protocol driver (is_terminal, num_choices, end_action_index,
randrange, apply_index at every step). Each rules file's time per step (a step is one
history entry: an action or a chance outcome) minus the floor is the rules' own work, setting
up the game included (so a short game, like Pola Naftowe's 36 steps, counts its new_game in
it). Default file: rules/acquire.rules. With REV (default 6436d68, the code before issue 13),
every module of both trees is loaded in one process and timed in alternating rounds on the
same seeds (a file that REV does not have is left out); the medians are printed with the
ratios, and what a 2x ratio on each file would ask of the rules' work at this tree's floor.
Wall-clock, so the machine's load moves the figures; the ratios are steadier.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_commits import DRIVE, HERE, compile_module, export_tree  # noqa: E402

TRIVIAL = """\
game Floor
players 2..6

state {
  n: int = 0
}

flow {
  run main()
}

phase main() {
  while n < 300 {
    for p in players {
      choose p {
        a() { n += 1 }
        b() { n += 1 }
        c() { n += 1 }
      }
    }
  }
}

score p => n
"""


def load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--baseline", default="6436d68", metavar="REV")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=40, help="games of each rules file a round")
    ap.add_argument("--rounds", type=int, default=12)
    args = ap.parse_args()
    files = [os.path.abspath(p) for p in args.files] or [os.path.join(HERE, "rules",
                                                                       "acquire.rules")]
    ns: dict = {}
    exec(DRIVE, ns)
    drive = ns["drive"]
    with tempfile.TemporaryDirectory() as tmp:
        trivial = os.path.join(tmp, "floor.rules")
        with open(trivial, "w", encoding="utf-8") as f:
            f.write(TRIVIAL)
        trees = {"this": HERE, args.baseline: export_tree(args.baseline, tmp)}
        old = trees[args.baseline]
        missing = [p for p in files
                   if not os.path.exists(os.path.join(old, os.path.relpath(p, HERE)))]
        for p in missing:
            print(f"{os.path.basename(p)}: not in {args.baseline}, left out")
        files = [p for p in files if p not in missing]
        names = ["floor", *(os.path.basename(p) for p in files)]
        mods = {}
        for tree, root in trees.items():
            for name, path in zip(names, [trivial, *files]):
                out = os.path.join(tmp, f"{tree}_{len(mods)}.py")
                # each tree plays its own copy of a rules file (the language may have grown)
                own = path if path == trivial else os.path.join(root, os.path.relpath(path, HERE))
                compile_module(root, own, None, out)
                mods[tree, name] = load(out, f"m{len(mods)}")
        games = {n: args.games * (10 if n == "floor" else 1) for n in names}
        steps = {}
        for key, m in mods.items():  # the same seeds every round: the same steps
            steps[key] = 0
            for seed in range(1, games[key[1]] + 1):
                s = m.new_game(args.players)
                drive(s, random.Random(seed))
                steps[key] += len(s.history)
        per_step: dict = {key: [] for key in mods}
        order = list(mods)
        for r in range(args.rounds):
            for key in (order if r % 2 == 0 else order[::-1]):
                m = mods[key]
                t0 = time.perf_counter()
                for seed in range(1, games[key[1]] + 1):
                    drive(m.new_game(args.players), random.Random(seed))
                per_step[key].append((time.perf_counter() - t0) / steps[key] * 1e9)
    med = {key: statistics.median(v) for key, v in per_step.items()}
    rev = args.baseline
    print(f"ns a step through the protocol driver, {args.players} players, median of "
          f"{args.rounds} rounds in one process (a step: one action or chance outcome)")
    print(f"  {'':28} {'this tree':>10} {rev:>10} {'ratio':>7}")
    floor_new, floor_old = med["this", "floor"], med[rev, "floor"]
    print(f"  {'floor (rules doing nothing)':28} {floor_new:10,.0f} {floor_old:10,.0f} "
          f"{floor_old / floor_new:6.2f}x")
    for name in names[1:]:
        new, old = med["this", name], med[rev, name]
        work_new, work_old = new - floor_new, old - floor_old
        sn, so = steps["this", name] / games[name], steps[rev, name] / games[name]
        print(f"  {name:28} {new:10,.0f} {old:10,.0f} {old / new:6.2f}x   "
              f"(steps a game: {sn:.1f} and {so:.1f}; a game {old * so / (new * sn):.2f}x)")
        print(f"  {'  of it, the rules work':28} {work_new:10,.0f} {work_old:10,.0f} "
              f"{work_old / work_new:6.2f}x")
        goal = old / 2
        if new <= goal:
            print(f"  {'':28} 2x of {rev}: reached")
        else:
            cut = 1 - (goal - floor_new) / work_new
            print(f"  {'':28} 2x of {rev} needs {goal:,.0f} ns a step: at this floor, "
                  f"{cut:.0%} less rules work" if goal > floor_new else
                  f"  {'':28} 2x of {rev} needs {goal:,.0f} ns a step: below this floor")


if __name__ == "__main__":
    main()
