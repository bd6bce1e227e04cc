"""Plain-language warnings when simulated games say little (degenerate statistics)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# A warning is given when more than this share of the games ends before the last round.
EARLY_SHARE = 0.5
# ... or when a seat took one action at this share of its real decisions (with enough of them).
SAME_ACTION_SHARE = 0.95
SAME_ACTION_MIN = 20


def warnings_for(game: Any, results: Sequence[Any], seats: Sequence[str] | None = None,
                 random_only: bool | None = None) -> list[str]:
    """Warnings for a run's results (sim.GameResult), in a fixed order. `seats` labels the
    seats (None: unlabelled); `random_only` says whether every player was random (default:
    from `seats`)."""
    from rulelang.sim import progress_counter

    out: list[str] = []
    n = len(results)
    if not n:
        return out
    counter = progress_counter(game)
    if counter is not None:
        var, param = counter
        last = game.params.get(param)
        ended = [r.progress for r in results if r.progress is not None]
        if isinstance(last, int) and ended:
            early = [v for v in ended if v < last]
            if len(early) > EARLY_SHARE * len(ended):
                counts: dict[int, int] = {}
                for v in ended:
                    counts[v] = counts.get(v, 0) + 1
                spread = ", ".join(f"{c} in {var} {v}" for v, c in sorted(counts.items()))
                if random_only is None:
                    random_only = not seats or all(s == "random" for s in seats)
                advice = ("with random players this usually means they play badly (try greedy "
                          "or mcts seats)" if random_only else
                          "check that this is how the game goes with these players")
                out.append(
                    f"{len(early)} of {len(ended)} games ended before the last {var} "
                    f"({param} = {last}): {spread}. The statistics describe these short games; "
                    f"{advice}."
                )
    tracked = [r.stats for r in results if r.stats is not None]
    if tracked:
        players = len(results[0].scores)
        for p in range(players):
            totals: dict[str, int] = {}
            for st in tracked:
                for name, c in st.seat_actions[p]:
                    totals[name] = totals.get(name, 0) + c
            total = sum(totals.values())
            if total < SAME_ACTION_MIN:
                continue
            name, top = max(sorted(totals.items()), key=lambda kv: kv[1])
            if top >= SAME_ACTION_SHARE * total:
                who = f"seat {p}" + (f" ({seats[p]})" if seats else "")
                out.append(
                    f"{who} took {name} at {top} of its {total} decisions that had a choice: "
                    "it almost always does the same thing."
                )
    return out
