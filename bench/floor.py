"""How much of a compiled game's time through the engine protocol is the protocol's floor, this
tree against another commit.

Usage: python bench/floor.py [FILES...] [--baseline REV] [--players N] [--games G] [--rounds R]

The floor is the time a step costs when the rules do nothing: a built-in game of three
parameterless options per player turn and one counter (TRIVIAL below), played by
compare_commits.py's protocol driver (is_terminal, num_choices, end_action_index,
randrange, apply_index at every step). Each rules file's time per step (a step is one
history entry: an action or a chance outcome) minus the floor is the rules' own work, setting
up the game included (so a short game, like Pola Naftowe's 36 steps, counts its new_game in
it). Default file: rules/acquire.rules. Each file's two modules (this tree's and REV's, each
compiled by its own tree from its own copy of the file; default REV 6436d68, the code before
issue 13) are timed as `compare_commits.py --inprocess` times them: in one fresh process,
rounds alternating on the same seeds, the ratio being the median of the rounds' ratios and the
times per step the best rounds'. Printed with what a 2x ratio on each file would ask of the
rules' work at this tree's floor. Wall-clock, so the machine's load moves the times; the
ratios are steadier. (Four modules timed in turn in one process gave Acquire ratios from 1.50x
to 1.81x from one run to the next; pairs, each in a fresh process, 1.71x to 1.78x.) The rules'
work subtracts a floor timed in another process, so it is an estimate.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_commits import DRIVE, HERE, compile_module, export_tree, in_process  # noqa: E402
from peer_inprocess import load  # noqa: E402

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


def steps_a_game(path: str, players: int, games: int) -> float:
    """History entries (actions and chance outcomes) a game of the module at `path` makes on the
    benchmark's seeds, 1..games."""
    m = load(path, "counted")
    ns: dict = {}
    exec(DRIVE, ns)
    total = 0
    for seed in range(1, games + 1):
        s = m.new_game(players)
        ns["drive"](s, random.Random(seed))
        total += len(s.history)
    return total / games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--baseline", default="6436d68", metavar="REV")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=40, help="games of each rules file a round")
    ap.add_argument("--rounds", type=int, default=16)
    args = ap.parse_args()
    rev = args.baseline
    files = [os.path.abspath(p) for p in args.files] or [os.path.join(HERE, "rules",
                                                                       "acquire.rules")]
    print(f"ns a step through the protocol driver, {args.players} players, each pair of "
          f"modules in one process, {args.rounds} rounds alternating (a step: one action or "
          f"chance outcome; ratio: the median of the rounds' ratios)")
    print(f"  {'':28} {'this tree':>10} {rev:>10} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        trivial = os.path.join(tmp, "floor.rules")
        with open(trivial, "w", encoding="utf-8") as f:
            f.write(TRIVIAL)
        old_root = export_tree(rev, tmp)
        floor = None
        for path in [trivial, *files]:
            name = "floor (rules doing nothing)" if path == trivial else os.path.basename(path)
            # each tree plays its own copy of a rules file (the language may have grown)
            own = path if path == trivial else os.path.join(old_root, os.path.relpath(path, HERE))
            if not os.path.exists(own):
                print(f"  {name:28} (not in {rev})")
                continue
            mods = [os.path.join(tmp, f"{i}_{os.path.basename(path)}.py") for i in (0, 1)]
            compile_module(old_root, own, None, mods[0])
            compile_module(HERE, path, None, mods[1])
            games = args.games * (10 if path == trivial else 1)
            so, sn = (steps_a_game(m, args.players, games) for m in mods)
            old_gs, new_gs, ratio = in_process(mods[0], mods[1], ("driver", "driver"),
                                               args.players, games, args.rounds)
            old, new = 1e9 / (old_gs * so), 1e9 / (new_gs * sn)  # ns a step, best rounds
            if floor is None:
                floor = (new, old)
                print(f"  {name:28} {new:10,.0f} {old:10,.0f} {ratio:6.2f}x")
                continue
            print(f"  {name:28} {new:10,.0f} {old:10,.0f} {ratio:6.2f}x   "
                  f"(steps a game: {sn:.1f} and {so:.1f})")
            work_new, work_old = new - floor[0], old - floor[1]
            print(f"  {'  of it, the rules work':28} {work_new:10,.0f} {work_old:10,.0f} "
                  f"{work_old / work_new:6.2f}x")
            goal = old * so / (2 * sn)  # a step's time at which a game takes half REV's time
            if ratio >= 2:
                print(f"  {'':28} 2x of {rev}: reached")
            elif goal > floor[0]:
                print(f"  {'':28} 2x of {rev} needs {goal:,.0f} ns a step: at this floor, "
                      f"{1 - (goal - floor[0]) / work_new:.0%} less rules work")
            else:
                print(f"  {'':28} 2x of {rev} needs {goal:,.0f} ns a step: below this floor")


if __name__ == "__main__":
    main()
