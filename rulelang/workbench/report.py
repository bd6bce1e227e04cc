"""Self-contained HTML reports (tables and matplotlib plots) for simulate, compare, sweep and
tournament results. matplotlib is the optional 'report' extra; the page needs nothing else: the
plots are embedded PNG images and the only script marks the page once every image has loaded.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from typing import Any

import click

from rulelang.workbench.describe import STYLE
from rulelang.workbench.stats import rate_interval


def require_matplotlib() -> None:
    """Fail early (before any game is played) when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise click.UsageError(
            "--report needs matplotlib: pip install 'rulelang[report]'") from None


# ---------------------------------------------------------------------------- building blocks


def _figure(width: float = 6.4, height: float = 3.6) -> Any:
    # A bare Figure (no pyplot): no global state, no GUI back end, safe in any process.
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def _img(fig: Any, alt: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]],
           marks: Sequence[bool] | None = None) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = []
    for k, row in enumerate(rows):
        cls = ' class="sig"' if marks and marks[k] else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row)
                    + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


_CHECK = ("<script>addEventListener('load',function(){var i=document.images,ok=true;"
          "for(var k=0;k<i.length;k++){if(!i[k].complete||i[k].naturalWidth===0)ok=false;}"
          "document.body.setAttribute('data-images',ok?'ok':'broken');"
          "document.body.setAttribute('data-image-count',String(i.length));});</script>")


def page(title: str, parts: Sequence[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style>{_CHECK}</head>\n"
            "<body>\n" + "\n".join(parts) + "\n</body></html>\n")


def _p(text: str) -> str:
    return f"<p>{html.escape(text)}</p>"


def _h(level: int, text: str) -> str:
    return f"<h{level}>{html.escape(text)}</h{level}>"


def _warnings(items: Sequence[str]) -> list[str]:
    if not items:
        return []
    return [_h(2, "Warnings"), "<ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in items)
            + "</ul>"]


def _rate_plot(labels: Sequence[str], rates: Sequence[float],
               cis: Sequence[Sequence[float]], fair: float | None, title: str) -> str:
    fig = _figure()
    ax = fig.subplots()
    xs = list(range(len(labels)))
    low = [max(0.0, r - c[0]) for r, c in zip(rates, cis)]
    high = [max(0.0, c[1] - r) for r, c in zip(rates, cis)]
    ax.bar(xs, [100 * r for r in rates], color="#4c72b0")
    ax.errorbar(xs, [100 * r for r in rates], yerr=[[100 * x for x in low],
                                                   [100 * x for x in high]],
                fmt="none", ecolor="black", capsize=4)
    if fair is not None:
        ax.axhline(100 * fair, color="grey", linestyle="--", linewidth=1, label="fair share")
        ax.legend()
    ax.set_xticks(xs, labels)
    ax.set_ylabel("win rate (%), 95% interval")
    ax.set_title(title)
    return _img(fig, title)


def _hist_plot(series: Sequence[tuple[str, Sequence[int]]], title: str) -> str:
    fig = _figure()
    ax = fig.subplots()
    values = [v for _label, vs in series for v in vs]
    if values:
        lo, hi = min(values), max(values)
        bins = max(1, min(30, hi - lo + 1))
        for label, vs in series:
            ax.hist(vs, bins=bins, range=(lo, hi + 1), alpha=0.6, label=label)
        if len(series) > 1:
            ax.legend()
    ax.set_xlabel("game length (decisions)")
    ax.set_ylabel("games")
    ax.set_title(title)
    return _img(fig, title)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


# ---------------------------------------------------------------------------- reports


def simulate_report(summary: dict[str, Any]) -> str:
    from rulelang.workbench.compare import value_text

    seats = summary["seats"]
    params = ", ".join(f"{k}={value_text(v)}" for k, v in sorted(summary["params"].items()))
    kinds = summary.get("seat_kinds") or ["random"] * summary["players"]
    labels = [f"seat {s['seat']}\n{kinds[s['seat']]}" for s in seats]
    parts = [_h(1, f"{summary['game']}: {summary['games']} simulated games"),
             _p(f"{summary['players']} players ({', '.join(kinds)}), seed {summary['seed']}, "
                f"backend {summary['backend']}, variant {summary['variant'] or '-'}, "
                f"parameters {params or '-'}.")]
    parts += _warnings(summary.get("warnings", []))
    parts.append(_h(2, "Win rates"))
    parts.append(_rate_plot(labels, [s["win_rate"] for s in seats],
                            [s["win_ci95"] for s in seats], 1 / summary["players"],
                            "Win rate per seat"))
    parts.append(_table(
        ["seat", "kind", "wins", "win rate", "95% interval", "score mean", "stdev", "min",
         "max"],
        [[s["seat"], kinds[s["seat"]], f"{s['wins']:g}", _pct(s["win_rate"]),
          rate_interval(*s["win_ci95"]),
          f"{s['score']['mean']:,.1f}", f"{s['score']['stdev']:,.1f}",
          f"{s['score']['min']:,}", f"{s['score']['max']:,}"] for s in seats]))
    parts.append(_h(2, "Game length"))
    hist = summary.get("length_histogram")
    if hist:
        fig = _figure()
        ax = fig.subplots()
        edges, counts = hist["edges"], hist["counts"]
        ax.bar(edges[:-1], counts, width=[b - a for a, b in zip(edges, edges[1:])],
               align="edge", color="#55a868")
        ax.set_xlabel("game length (decisions)")
        ax.set_ylabel("games")
        ax.set_title("Game length")
        parts.append(_img(fig, "Game length"))
    length = summary["length"]
    parts.append(_p(f"Decisions per game: mean {length['mean']:,.1f}, standard deviation "
                    f"{length['stdev']:,.1f}, from {length['min']:,} to {length['max']:,}."))
    return page(f"{summary['game']} simulation", parts)


def compare_report(result: dict[str, Any]) -> str:
    a, b = result["arms"]["a"]["label"], result["arms"]["b"]["label"]
    parts = [_h(1, f"{result['game']}: {b} against {a}"),
             _p(f"{result['games']} paired games (the same seeds in both arms), "
                f"{result['players']} players ({', '.join(result['seats'])}), seed "
                f"{result['seed']}, backend {result['backend']}. Differences are B - A with "
                "95% intervals (Student's t on the per-game differences); significant rows are "
                "in bold.")]
    from rulelang.workbench.compare import compare_cells, verdict_lines

    parts.append("<ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in verdict_lines(result))
                 + "</ul>")
    warnings = [f"arm A: {w}" for w in result["warnings"]["a"]]
    warnings += [f"arm B: {w}" for w in result["warnings"]["b"]]
    parts += _warnings(warnings)
    rows, marks = [], []
    for r in result["rows"]:
        d = r["difference"]
        rows.append([r["measure"], *compare_cells(r), "yes" if d["significant"] else "no"])
        marks.append(d["significant"])
    parts.append(_h(2, "Paired differences"))
    parts.append(_table(["measure", "A", "B", "B - A", "95% interval", "significant"], rows,
                        marks))
    wins = [r for r in result["rows"] if r["measure"].startswith("wins seat")]
    if wins:
        fig = _figure()
        ax = fig.subplots()
        xs = list(range(len(wins)))
        means = [100 * r["difference"]["mean"] for r in wins]
        err = [[100 * (r["difference"]["mean"] - r["difference"]["ci95"][0]) for r in wins],
               [100 * (r["difference"]["ci95"][1] - r["difference"]["mean"]) for r in wins]]
        ax.bar(xs, means, color=["#c44e52" if r["difference"]["significant"] else "#8c8c8c"
                                 for r in wins])
        ax.errorbar(xs, means, yerr=err, fmt="none", ecolor="black", capsize=4)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(xs, [r["measure"].replace("wins ", "") for r in wins])
        ax.set_ylabel("win rate, B - A (points), 95% interval")
        ax.set_title("Change in win rate per seat")
        parts.append(_img(fig, "Change in win rate per seat"))
    parts.append(_h(2, "Game length"))
    parts.append(_hist_plot([("A: " + a, result["lengths"]["a"]),
                             ("B: " + b, result["lengths"]["b"])], "Game length"))
    return page(f"{result['game']} comparison", parts)


def tournament_report(result: dict[str, Any]) -> str:
    rows = sorted(result["rows"], key=lambda r: -r["elo"])
    parts = [_h(1, f"{result['game']}: tournament of {', '.join(result['bots'])}"),
             _p(f"{result['games']} games, {result['players']} players, seats rotated, seed "
                f"{result['seed']}, backend {result['backend']}.")]
    parts += _warnings(result.get("warnings", []))
    parts.append(_rate_plot([r["bot"] for r in rows], [r["win_rate"] for r in rows],
                            [r["win_ci95"] for r in rows], result["fair_share"],
                            "Win rate per seat-game"))
    parts.append(_table(["bot", "seat-games", "win rate", "95% interval", "Elo"],
                        [[r["bot"], r["seat_games"], _pct(r["win_rate"]),
                          rate_interval(*r["win_ci95"]),
                          f"{r['elo']:+.0f}"] for r in rows]))
    parts.append(_h(2, "Head to head"))
    parts.append(_table(["A", "B", "pairings", "A's score", "95% interval", "verdict"],
                        [[p["a"], p["b"], p["pairings"], f"{p['a_score']:.3f}",
                          f"{p['ci95'][0]:.3f} – {p['ci95'][1]:.3f}",
                          f"{p['better']} is stronger" if p["better"]
                          else "no significant difference"] for p in result["pairs"]],
                        [p["significant"] for p in result["pairs"]]))
    parts.append(_h(2, "Game length"))
    parts.append(_hist_plot([("all games", result["lengths"])], "Game length"))
    return page(f"{result['game']} tournament", parts)


def sweep_report(result: dict[str, Any]) -> str:
    from rulelang.workbench.commands import pm_cell, sweep_columns
    from rulelang.workbench.compare import is_rate, value_text

    axes = result["axes"]
    names = [a["name"] for a in axes]
    parts = [_h(1, f"{result['game']}: sweep of {' × '.join(names)}"),
             _p(f"{result['games']} games per point with the same seeds, {result['players']} "
                f"players ({', '.join(result['seats'])}), seed {result['seed']}, backend "
                f"{result['backend']}. Bands and ± are 95% intervals.")]
    warnings = [f"{', '.join(f'{k}={value_text(v)}' for k, v in row['point'].items())}: {w}"
                for row in result["points"] for w in row["warnings"]]
    parts += _warnings(warnings)
    cols = sweep_columns(result)
    numeric = all(isinstance(v, int) and not isinstance(v, bool) for v in axes[0]["values"])
    for col in cols:
        fig = _figure()
        ax = fig.subplots()
        groups: list[tuple[str, list[dict[str, Any]]]]
        if len(axes) == 1:
            groups = [("", result["points"])]
        else:
            groups = [(f"{names[1]}={value_text(v)}", [r for r in result["points"]
                                          if r["point"][names[1]] == v])
                      for v in axes[1]["values"]]
        for label, rows in groups:
            xs = ([r["point"][names[0]] for r in rows] if numeric
                  else list(range(len(rows))))
            ivs = [r["measures"][col] for r in rows]
            scale = 100 if is_rate(col) else 1
            mean = [scale * iv["mean"] for iv in ivs]
            lo = [scale * iv["ci95"][0] if math.isfinite(iv["ci95"][0]) else scale * iv["mean"]
                  for iv in ivs]
            hi = [scale * iv["ci95"][1] if math.isfinite(iv["ci95"][1]) else scale * iv["mean"]
                  for iv in ivs]
            line = ax.plot(xs, mean, marker="o", label=label or None)[0]
            ax.fill_between(xs, lo, hi, alpha=0.2, color=line.get_color())
        if numeric:
            ax.xaxis.get_major_locator().set_params(integer=True)
        else:
            ax.set_xticks(list(range(len(axes[0]["values"]))),
                          [value_text(v) for v in axes[0]["values"]])
        if len(groups) > 1:
            ax.legend()
        ax.set_xlabel(names[0])
        ax.set_ylabel(col + (" (%)" if is_rate(col) else ""))
        ax.set_title(col)
        parts.append(_img(fig, f"{col} against {names[0]}"))
    rows = []
    for r in result["points"]:
        cells = [value_text(r["point"][n]) for n in names]
        cells += [pm_cell(r["measures"][c], is_rate(c)) for c in cols]
        rows.append(cells)
    parts.append(_h(2, "Values"))
    parts.append(_table([*names, *cols], rows))
    return page(f"{result['game']} sweep", parts)
