"""Screen lines a person reads at one decision of `rulelang play` (line mode).

Plays each game with seat 0 answering at random until the named decision comes up, then prints
how many lines the turn screen (log since the last turn, view, action menu) takes:

    python bench/screen_lines.py
"""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

from rich.console import Console

from rulelang.play import EndOfInput, Session, plain_game

ROOT = Path(__file__).resolve().parent.parent
CASES = [  # (file, seats, seed, action name that marks the turn to measure, nth occurrence)
    ("rules/acquire.rules", 4, 7, "place", 1),
    ("rules/acquire.rules", 4, 7, "place", 20),
    ("rules/poder.rules", 3, 3, "bid", 1),
    ("rules/polanaftowe.rules", 3, 5, "lobby", 1),
    ("rules/powergrid.rules", 3, 5, "bid", 1),
    ("rules/powergrid.rules", 3, 5, "build", 10),
]


class _Stop(Exception):
    pass


def screen(file: str, seats: int, seed: int, action: str, nth: int, width: int = 120) -> str:
    session = Session(str(ROOT / file), ["human"] + ["random"] * (seats - 1), seed=seed)
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, highlight=False)
    rng = random.Random(seed)
    seen = [0]

    def read(prompt: str) -> str:
        legal = session.state.legal_actions()
        if any(a.startswith(action + "(") for a in legal):
            seen[0] += 1
            if seen[0] == nth:
                raise _Stop
        buf.seek(0)
        buf.truncate()
        choices = [k for k, a in enumerate(legal) if not a.startswith("declare_end")]
        # the action itself: a menu number can also be an amount ('45': action 45 or bid 45)
        return legal[rng.choice(choices)]

    try:
        plain_game(session, console, read)
    except (_Stop, EndOfInput):
        pass
    return buf.getvalue()


def main() -> None:
    show = "--show" in sys.argv
    for file, seats, seed, action, nth in CASES:
        text = screen(file, seats, seed, action, nth)
        print(f"{file} ({seats} players, seed {seed}), turn #{nth} with {action}: "
              f"{len(text.splitlines())} lines")
        if show:
            print(text)


if __name__ == "__main__":
    main()
