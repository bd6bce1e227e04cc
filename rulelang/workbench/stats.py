"""Small, exact-enough statistics for the workbench: paired differences, t intervals, Elo."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from rulelang.sim import Z95

# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom.
_T95 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
        2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
        2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
        2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
        2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456)


def sig(x: float, digits: int, sign: bool = False) -> str:
    """x to `digits` significant figures, written out in full with thousands separated by
    commas, the way a table of game measures reads best: 10832.5 -> "10,830" (where the format
    .4g gives "1.083e+04"), 6.855 -> "6.855", 28.0 -> "28", 0.0012345 -> "0.001234". `sign`:
    a "+" before a positive value. An infinite or undefined value is written as Python
    writes it."""
    if not math.isfinite(x):
        return f"{x:+}" if sign and x > 0 else f"{x}"
    if x == 0:
        return "+0" if sign else "0"
    places = digits - 1 - math.floor(math.log10(abs(x)))
    x = round(x, places)
    text = f"{x:{'+' if sign else ''},.{max(places, 0)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def rate_interval(low: float, high: float) -> str:
    """A win rate's interval as the tables write it, in percent with one decimal and one sign:
    (0.213, 0.335) -> "21.3–33.5%" (the terminal's per-seat rows fit in 80 columns so)."""
    return f"{100 * low:.1f}–{100 * high:.1f}%"


def t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with `df` degrees of freedom."""
    if df < 1:
        return math.inf
    if df <= len(_T95):
        return _T95[df - 1]
    # Cornish-Fisher expansion around the normal quantile (error below 1e-5 for df > 30).
    z = Z95
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean with its 95% interval; `significant` when the interval excludes `null`."""

    mean: float
    low: float
    high: float
    n: int
    null: float = 0.0

    @property
    def significant(self) -> bool:
        return self.n > 1 and (self.low > self.null or self.high < self.null)

    def as_json(self) -> dict[str, float | int | bool]:
        return {"mean": self.mean, "ci95": [self.low, self.high], "n": self.n,
                "significant": self.significant}


def mean_interval(values: Sequence[float], null: float = 0.0) -> Interval:
    """Mean and t interval of `values` (for paired differences: of the differences)."""
    n = len(values)
    if n == 0:
        return Interval(0.0, 0.0, 0.0, 0, null)
    mean = statistics.fmean(values)
    if n == 1:
        return Interval(mean, -math.inf, math.inf, 1, null)
    sd = statistics.stdev(values)
    half = t95(n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, null)


def rate_estimate(values: Sequence[float], shift: float = 0.0) -> Interval:
    """A share of the games (each value one game's share of a win, 0..1, plus `shift`): the
    mean with its Wilson score interval, which stays within the shares' bounds and is not of
    zero width when no game (or every game) was won. A t interval is neither: at 2 games it
    read "50.0% ± 635.3", and "0.0% ± 0.0" when seat 0 won neither."""
    from rulelang.sim import wilson_interval

    n = len(values)
    if n == 0:
        return Interval(0.0, 0.0, 0.0, 0)
    mean = statistics.fmean(values)
    low, high = wilson_interval(sum(v - shift for v in values), n)
    return Interval(mean, low + shift, high + shift, n)


def clamped(iv: Interval, low: float, high: float) -> Interval:
    """`iv` with its interval cut to the values the measure can take (a difference of two shares
    of the games lies in -1..1, which a t interval over few games overshoots)."""
    return Interval(iv.mean, max(iv.low, low), min(iv.high, high), iv.n, iv.null)


def paired(a: Sequence[float], b: Sequence[float]) -> Interval:
    """The paired difference b - a (the same seeds in both arms), with its 95% interval."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    return mean_interval([y - x for x, y in zip(a, b)])


def elo(pairs: Sequence[tuple[int, int, float]], players: int, anchor: int | None = None,
        iterations: int = 200) -> list[float]:
    """Elo-style ratings from pairwise results (a, b, score of a in [0, 1]).

    A Bradley-Terry fit by fixed-point iterations (deterministic), on the Elo scale (400 points
    = 10:1 odds). Ratings are shifted so that `anchor` is 0, or their mean when no anchor.
    Half a draw against a virtual equal opponent keeps unbeaten or winless bots finite.
    """
    wins = [0.5] * players
    games: dict[tuple[int, int], float] = {}
    for a, b, score in pairs:
        wins[a] += score
        wins[b] += 1.0 - score
        key = (min(a, b), max(a, b))
        games[key] = games.get(key, 0.0) + 1.0
    strength = [1.0] * players
    for _ in range(iterations):
        new = []
        for i in range(players):
            denom = 1.0 / (strength[i] + 1.0)  # the virtual equal opponent (strength 1)
            for (a, b), n in sorted(games.items()):
                if i in (a, b):
                    j = b if i == a else a
                    denom += n / (strength[i] + strength[j])
            new.append(wins[i] / denom if denom > 0 else strength[i])
        strength = new
    ratings = [400.0 * math.log10(s) for s in strength]
    shift = ratings[anchor] if anchor is not None else statistics.fmean(ratings)
    return [r - shift for r in ratings]
