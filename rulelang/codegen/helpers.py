"""The runtime helpers a generated module calls, copied from the source of rulelang.runtime.

A module holds exactly the top-level definitions of runtime.py that its code names, and those
they name in turn, in the order runtime.py defines them; nothing else. Names are found by
parsing, not by searching text, so a helper named in a string or a comment is not copied.
"""

from __future__ import annotations

import ast as pyast
import functools
import inspect
from dataclasses import dataclass

from rulelang import runtime
from rulelang.codegen.support import EmitError


@dataclass(frozen=True)
class _Def:
    defines: frozenset[str]
    uses: frozenset[str]
    text: str
    kind: str  # "import", "assign" or "def" (functions and classes)


@functools.cache
def _definitions() -> tuple[_Def, ...]:
    source = inspect.getsource(runtime)
    lines = source.splitlines()
    out = []
    for node in pyast.parse(source).body:
        if isinstance(node, pyast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, pyast.Import | pyast.ImportFrom):
            defines = {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, pyast.FunctionDef | pyast.ClassDef):
            defines = {node.name}
        elif isinstance(node, pyast.Assign):
            defines = {t.id for t in node.targets if isinstance(t, pyast.Name)}
        else:
            continue  # the module docstring
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())]) - 1
        while first > 0 and lines[first - 1].startswith("#") and not lines[first - 1].startswith(
                "# ----"):
            first -= 1  # the comment that belongs to this definition
        uses = {n.id for n in pyast.walk(node) if isinstance(n, pyast.Name)} - defines
        kind = ("import" if isinstance(node, pyast.Import | pyast.ImportFrom)
                else "assign" if isinstance(node, pyast.Assign) else "def")
        out.append(_Def(frozenset(defines), frozenset(uses),
                        "\n".join(lines[first:node.end_lineno]), kind))
    return tuple(out)


def helpers_for(read: set[str], defined: set[str]) -> tuple[list[str], str]:
    """(import lines, source of the definitions) of the runtime helpers a module (written
    without them) needs, given the names its code reads and those it defines at top level."""
    defs = _definitions()
    provided = {n: d for d in defs for n in d.defines}
    clash = sorted(defined & set(provided))
    if clash:
        raise EmitError(f"generated names clash with runtime helpers: {clash}")
    want = {n for n in read if n in provided}
    todo = list(want)
    while todo:
        for n in provided[todo.pop()].uses:
            if n in provided and n not in want:
                want.add(n)
                todo.append(n)
    chosen = [d for d in defs if d.defines & want]
    imports = [d.text for d in chosen if d.kind == "import"]
    body: list[str] = []
    prev = None
    for d in chosen:
        if d.kind == "import":
            continue
        if prev is not None:
            # constants one after another; two blank lines around functions and classes
            body.append("\n" if prev.kind == d.kind == "assign" else "\n\n\n")
        body.append(d.text)
        prev = d
    return imports, "".join(body) + "\n"


# Top-level definitions of a generated module that exist only to be called or read by its own
# code: one that nothing refers to is left out.
PRUNABLE = ("def_", "table_", "TABLE_", "AT_", "NAMES_", "FIELD_", "CONST_", "NEIGHBORS_",
            "NEIGHBOR_MASKS_", "GRAPH_", "GRAPH_NEIGHBORS_", "EDGE_COSTS_", "GRAPHS_", "TEXTS_",
            "ARGS_", "LIMIT_", "MEMBERS_", "BIT_", "ALL_")


def link(module_text: str) -> tuple[str, set[str], set[str]]:
    """The module without the PRUNABLE top-level definitions that nothing it keeps refers to (a
    def always inlined, a location no fault can report, an enum no value shows), with the
    names its kept code reads and those it defines at top level. Found by parsing once:
    every other top-level statement is kept, and with it what it refers to, transitively."""
    tree = pyast.parse(module_text)
    defs: dict[str, pyast.stmt] = {}
    for node in tree.body:
        if isinstance(node, pyast.FunctionDef | pyast.ClassDef):
            defs[node.name] = node
        elif isinstance(node, pyast.Assign):
            for t in node.targets:
                if isinstance(t, pyast.Name):
                    defs[t.id] = node
    reads = {id(node): {n.id for n in pyast.walk(node) if isinstance(n, pyast.Name)}
             for node in tree.body}
    live = [node for node in tree.body if not any(
        name.startswith(PRUNABLE) and node is d for name, d in defs.items())]
    seen = {id(node) for node in live}
    todo = list(live)
    while todo:
        for name in reads[id(todo.pop())]:
            node = defs.get(name)
            if node is not None and id(node) not in seen:
                seen.add(id(node))
                todo.append(node)
    dead = [node for node in tree.body if id(node) not in seen]
    read = set().union(*(reads[id(node)] for node in tree.body if id(node) in seen))
    defined = {name for name, node in defs.items() if id(node) in seen}
    if not dead:
        return module_text, read, defined
    drop: set[int] = set()
    for node in dead:
        drop.update(range(node.lineno - 1, node.end_lineno))
    lines = module_text.split("\n")
    kept = "\n".join(line for i, line in enumerate(lines) if i not in drop)
    return _squeeze_blank_lines(kept), read, defined


def _squeeze_blank_lines(text: str) -> str:
    """At most two blank lines in a row (what a removed definition leaves behind)."""
    out: list[str] = []
    blanks = 0
    for line in text.split("\n"):
        blanks = blanks + 1 if not line.strip() else 0
        if blanks <= 2:
            out.append(line)
    return "\n".join(out)
