"""`rulelang describe`: a readable description of a checked rules file (Markdown or HTML).

Everything is read from the checked program: parameters (type, range, default, comment),
variants and what they change, decisions with their parameters, chance events, the state and
its visibility, the end declarations, the scoring, the heuristic and the metrics. Expressions are
quoted from the source text, so a designer can hold the engine against the rulebook.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterator
from typing import Any

from rulelang import ast

Block = tuple  # ("h", level, text) | ("p", text) | ("table", headers, rows) | ("list", items)


class _Source:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def text(self, span: Any) -> str:
        """The source text of a node's span, on one line (whitespace runs folded)."""
        if span is None or span.line <= 0:
            return ""
        if not span.end_line:
            return self.lines[span.line - 1][span.col - 1:].strip()
        if span.end_line == span.line:
            out = self.lines[span.line - 1][span.col - 1:span.end_col - 1]
        else:
            parts = [self.lines[span.line - 1][span.col - 1:]]
            parts += self.lines[span.line:span.end_line - 1]
            parts.append(self.lines[span.end_line - 1][:span.end_col - 1])
            out = " ".join(p.strip() for p in parts)
        return " ".join(out.split())

    def comment(self, line: int) -> str:
        """The comment for the declaration on `line`: comment lines just above it, then the
        comment at the end of the line."""
        above: list[str] = []
        i = line - 2
        # Section rules ("# ---- parameters ----") head a group, not one declaration.
        while (i >= 0 and self.lines[i].strip().startswith("#")
               and "----" not in self.lines[i]):
            above.insert(0, self.lines[i].strip().lstrip("#").strip())
            i -= 1
        own = self.lines[line - 1]
        trailing = own.split("#", 1)[1].strip() if "#" in own else ""
        return " ".join(x for x in [*above, trailing] if x)


def _type_text(t: Any) -> str:
    if isinstance(t, ast.TName):
        return t.name
    if isinstance(t, ast.TSet):
        return f"set<{_type_text(t.elem)}>"
    if isinstance(t, ast.TList):
        return f"list<{_type_text(t.elem)}>"
    if isinstance(t, ast.TArray):
        return f"{_type_text(t.elem)}[{_type_text(t.index)}]"
    if isinstance(t, ast.TOpt):
        return f"{_type_text(t.inner)}?"
    return str(t)


def _walk(node: Any) -> Iterator[Any]:
    """Every AST node below `node`, in source order."""
    yield node
    if not dataclasses.is_dataclass(node):
        return
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, tuple):
                for sub in item:
                    if dataclasses.is_dataclass(sub):
                        yield from _walk(sub)
            elif dataclasses.is_dataclass(item) and not isinstance(item, type):
                yield from _walk(item)


def describe_blocks(program: Any) -> list[Block]:
    """The description as a list of blocks (rendered by to_markdown / to_html)."""
    src = _Source(program.source)
    out: list[Block] = [("h", 1, f"{program.name}")]
    out.append(("p", f"Rules file `{program.filename}` (sha256 {program.digest[:16]}…), "
                     f"{program.min_players} to {program.max_players} players"
                     + (f", variant `{program.variant}`" if program.variant else "") + "."))

    # Parameters
    out.append(("h", 2, "Parameters"))
    if program.params:
        values, fault = _param_values(program)
        rows = []
        for name, d in program.params.items():
            bounds = program.param_ranges.get(name)
            default = src.text(d.default.span)
            if values is not None:  # the value itself, derived ones included (`b + K`: 32)
                effective = _value_text(program, name, values[name])
            else:  # (they fault: what gives each, as written)
                effective = src.text(program.param_exprs[name].span)
                if name in program.param_values:
                    effective = _value_text(program, name, program.param_values[name])
                effective = effective if effective != default else ""
            rows.append([f"`{name}`", _type_text(d.type),
                         f"{bounds[0]}..{bounds[1]}" if bounds else "",
                         f"`{default}`",
                         f"`{effective}`" if effective else "",
                         src.comment(d.span.line)])
        out.append(("table", ["name", "type", "range", "default", "in this run", "comment"],
                    rows))
        if fault is not None:
            out.append(("p", f"Loading the rules faults, so the values in this run are not "
                             f"shown: {fault}."))
        out.append(("p", "Override any of them with `-D name=value`; a value outside a "
                         "declared range is refused."))
    else:
        out.append(("p", "None."))

    # Variants
    out.append(("h", 2, "Variants"))
    if program.variants:
        rows = []
        for name, v in program.variants.items():
            changes = ", ".join(f"`{o.name} = {src.text(o.value.span)}`" for o in v.overrides)
            rows.append([f"`{name}`", changes or "(nothing)", src.comment(v.span.line)])
        out.append(("table", ["variant", "changes", "comment"], rows))
    else:
        out.append(("p", "None."))

    # State
    out.append(("h", 2, "State"))
    rows = []
    for v in program.state_vars:
        seen = {"hidden": "nobody", "private": "its owner only"}.get(v.visibility or "",
                                                                       "everyone")
        rows.append([f"`{v.name}`", f"`{_type_text(v.type)}`", seen,
                     f"`{src.text(v.init.span)}`", src.comment(v.span.line)])
    out.append(("table", ["variable", "type", "seen by", "starts as", "comment"], rows))

    # Decisions and chance
    decisions: list[list[str]] = []
    chances: list[list[str]] = []
    containers: list[tuple[str, Any]] = [("flow", program.flow)]
    containers += [(f"phase {name}", ph) for name, ph in program.phases.items()]
    for where, node in containers:
        if node is None:
            continue
        for n in _walk(node):
            if isinstance(n, ast.Choose):
                for opt in n.options:
                    params = ", ".join(
                        f"{p.name}: {_type_text(p.type)}"
                        + (f" in {src.text(p.domain.span)}" if p.domain is not None else "")
                        for p in opt.params)
                    decisions.append([
                        f"`{opt.name}({params})`",
                        f"`{src.text(n.player.span)}`" + (" (secret)" if n.secret else ""),
                        where,
                        f"`{src.text(opt.when.span)}`" if opt.when is not None else "",
                        "ends the game" if opt.annotation == "end" else "",
                        f"line {opt.span.line}"])
            elif isinstance(n, ast.Chance):
                seen = ("everyone" if n.seen_by is None
                        else f"`{src.text(n.seen_by.span)}`")
                chances.append([
                    f"`{n.name}({n.var}: {_type_text(n.type)} in {src.text(n.domain.span)})`",
                    f"`{src.text(n.weight.span)}`" if n.weight is not None else "uniform",
                    seen, where, f"line {n.span.line}"])
    for sd in getattr(program, "standing", ()):
        for opt in sd.options:
            params = ", ".join(
                f"{p.name}: {_type_text(p.type)}"
                + (f" in {src.text(p.domain.span)}" if p.domain is not None else "")
                for p in opt.params)
            decisions.append([
                f"`{opt.name}({params})`", f"`{sd.var}`",
                f"standing: at every decision of `{sd.var}`",
                f"`{src.text(opt.when.span)}`" if opt.when is not None else "",
                "ends the game" if opt.annotation == "end" else "",
                f"line {opt.span.line}"])
    out.append(("h", 2, "Decisions"))
    out.append(("table", ["action", "chosen by", "where", "only when", "note", "source"],
                decisions) if decisions else ("p", "None."))
    out.append(("h", 2, "Chance events"))
    out.append(("table", ["outcome", "weight", "seen by", "where", "source"], chances)
               if chances else ("p", "None."))

    # End and scoring
    out.append(("h", 2, "End and scoring"))
    items = []
    if program.end_actions:
        items.append("The game can be ended by declaring "
                     + ", ".join(f"`{a}`" for a in sorted(program.end_actions))
                     + "; otherwise it ends when the flow finishes.")
    else:
        items.append("The game ends when the flow finishes.")
    for sd, what in ((program.score, "Score"), (program.tiebreak, "Tie-break"),
                     (program.heuristic, "Bots' heuristic")):
        if sd is not None:
            items.append(f"{what} of player `{sd.var}`: `{src.text(sd.expr.span)}`"
                         + (f" ({c})" if (c := src.comment(sd.span.line)) else ""))
    items.append("The winners are the players with the greatest (score, tie-break); a tie "
                 "shares the win.")
    out.append(("list", items))
    if program.metrics:
        out.append(("h", 2, "Metrics"))
        out.append(("table", ["metric", "value at the end", "comment"],
                    [[f"`{name}`", f"`{src.text(m.expr.span)}`", src.comment(m.span.line)]
                     for name, m in program.metrics.items()]))
    return out


def _param_values(program: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(every parameter's value in this run: defaults, variant values and -D values worked
    out, None if that faults; the fault as `location: message`, or None)."""
    from rulelang.consts import Constants
    from rulelang.errors import RulesRuntimeError

    try:
        return dict(Constants(program).param_values), None
    except RulesRuntimeError as err:
        return None, f"`{err.location}`: {err.message}"


def _value_text(program: Any, name: str, value: Any) -> str:
    t = program.param_types[name]
    if t.kind == "enum":
        return program.enums[t.name].members[value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: list[Block]) -> str:
    lines: list[str] = []
    for b in blocks:
        if b[0] == "h":
            lines += ["#" * b[1] + " " + b[2], ""]
        elif b[0] == "p":
            lines += [b[1], ""]
        elif b[0] == "list":
            lines += [f"- {item}" for item in b[1]] + [""]
        elif b[0] == "table":
            headers, rows = b[1], b[2]
            lines.append("| " + " | ".join(headers) + " |")
            lines.append("|" + "---|" * len(headers))
            for row in rows:
                lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _inline_html(text: str) -> str:
    """Escape, then turn `code` spans into <code>."""
    parts = text.split("`")
    return "".join(f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p)
                   for i, p in enumerate(parts))


def to_html(blocks: list[Block], title: str) -> str:
    body: list[str] = []
    for b in blocks:
        if b[0] == "h":
            body.append(f"<h{b[1]}>{_inline_html(b[2])}</h{b[1]}>")
        elif b[0] == "p":
            body.append(f"<p>{_inline_html(b[1])}</p>")
        elif b[0] == "list":
            body.append("<ul>" + "".join(f"<li>{_inline_html(i)}</li>" for i in b[1])
                        + "</ul>")
        elif b[0] == "table":
            head = "".join(f"<th>{html.escape(h)}</th>" for h in b[1])
            rows = "".join("<tr>" + "".join(f"<td>{_inline_html(c)}</td>" for c in row)
                           + "</tr>" for row in b[2])
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
        + "\n".join(body) + "\n</body></html>\n")


STYLE = ("body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em}"
         "table{border-collapse:collapse;margin:.5em 0 1.5em}"
         "th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}"
         "th{background:#f3f3f3}code{background:#f6f6f6;padding:0 .2em}"
         ".sig{font-weight:bold}img{max-width:100%}")


def describe(program: Any, fmt: str = "markdown") -> str:
    blocks = describe_blocks(program)
    if fmt == "html":
        return to_html(blocks, f"{program.name}: rules description")
    return to_markdown(blocks)
