"""The last step of code generation: a generated function's temporaries share names.

The printer gives every temporary a fresh name (`_t1`, `_t2`, ...: support._Fn.tmp), and a flow
function has the blocks that follow a pause copied in, so one function can hold a hundred of
them (Acquire's buy loop test: 113 locals, most of them in blocks a call rarely reaches). CPython
clears every local slot of a frame when the call returns, whatever the call ran, so each call
pays for all of them. Here the temporaries of a function whose lives do not overlap are given
one name: Acquire's buy loop test keeps 52 locals, and a game through the protocol takes 1.5%
fewer instructions and about 1% less time (docs/performance.md).

A temporary's life is the span of lines from its first to its last occurrence, widened to the
whole of any loop it touches (a value may be read in the next round of the loop). Outside loops
the generated code only runs forward (if/else, try/except, break, continue and return jump
ahead), so two temporaries whose spans do not meet are never both needed: the later one is
written after the earlier one's last read. A function with a nested scope (a lambda, a
comprehension, a nested def) or with a temporary among its parameters is left as it is. Names
are replaced at their exact positions in the text, so every line keeps its number and the
module's line map (`# rules:N`) still holds.
"""

from __future__ import annotations

import ast
import heapq
import re

_TEMP = re.compile(r"_t\d+\Z")
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def share_temporaries(text: str) -> str:
    """`text` (a generated module) with each function's temporaries renamed to share names."""
    edits: dict[int, list[tuple[int, int, str]]] = {}
    for fn in _functions(ast.parse(text)):
        _rename(fn, edits)
    if not edits:
        return text
    lines = text.split("\n")
    for number, changes in edits.items():
        line = lines[number - 1].encode("utf-8")  # (ast offsets count UTF-8 bytes)
        for start, end, name in sorted(changes, reverse=True):
            line = line[:start] + name.encode("utf-8") + line[end:]
        lines[number - 1] = line.decode("utf-8")
    return "\n".join(lines)


def _functions(tree: ast.Module):
    """Functions of the module and methods of its classes (not functions nested in them)."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (n for n in node.body if isinstance(n, ast.FunctionDef))


def _rename(fn: ast.FunctionDef, edits: dict[int, list[tuple[int, int, str]]]) -> None:
    args = fn.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                              *filter(None, (args.vararg, args.kwarg))]}
    if any(_TEMP.match(p) for p in params):
        return
    names: list[ast.Name] = []
    loops: list[tuple[int, int]] = []
    for node in ast.walk(fn):
        if node is fn:
            continue
        if isinstance(node, _NESTED):
            return
        if isinstance(node, _LOOPS):
            loops.append((node.lineno, node.end_lineno or node.lineno))
        elif isinstance(node, ast.Name) and _TEMP.match(node.id):
            names.append(node)
    if not names:
        return
    span: dict[str, tuple[int, int]] = {}
    for n in names:  # (a name is on one line)
        lo, hi = span.get(n.id, (n.lineno, n.lineno))
        span[n.id] = (min(lo, n.lineno), max(hi, n.lineno))
    changed = True
    while changed:  # widen to the loops touched, until no span grows (loops nest)
        changed = False
        for name, (lo, hi) in span.items():
            for a, b in loops:
                if lo <= b and hi >= a and (lo > a or hi < b):
                    lo, hi = min(lo, a), max(hi, b)
                    changed = True
            span[name] = (lo, hi)
    # Interval colouring in order of first line: a name is free again after its span ends, and
    # the smallest free one is taken.
    colour: dict[str, int] = {}
    live: list[tuple[int, int]] = []  # heap of (last line, colour)
    free: list[int] = []  # heap of colours
    for name, (lo, hi) in sorted(span.items(), key=lambda kv: (kv[1], int(kv[0][2:]))):
        while live and live[0][0] < lo:
            heapq.heappush(free, heapq.heappop(live)[1])
        c = heapq.heappop(free) if free else len(live) + 1
        colour[name] = c
        heapq.heappush(live, (hi, c))
    for n in names:
        new = f"_t{colour[n.id]}"
        if new != n.id:
            edits.setdefault(n.lineno, []).append((n.col_offset, n.end_col_offset or 0, new))
