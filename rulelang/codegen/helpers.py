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


def names_used(module_text: str) -> tuple[set[str], set[str]]:
    """(names read, names defined at top level) of a Python module's source."""
    tree = pyast.parse(module_text)
    read = {n.id for n in pyast.walk(tree) if isinstance(n, pyast.Name)}
    defined = set()
    for node in tree.body:
        if isinstance(node, pyast.FunctionDef | pyast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, pyast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, pyast.Name))
    return read, defined


def helpers_for(module_text: str) -> tuple[list[str], str]:
    """(import lines, source of the definitions) of the runtime helpers a module (written
    without them) needs."""
    defs = _definitions()
    provided = {n: d for d in defs for n in d.defines}
    read, defined = names_used(module_text)
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
            "NEIGHBOR_MASKS_", "GRAPH_", "GRAPH_NEIGHBORS_", "EDGE_COSTS_", "TEXTS_", "ARGS_",
            "LIMIT_")


def drop_unused(module_text: str) -> str:
    """The module without the PRUNABLE top-level definitions that no other code refers to (a
    def always inlined, a location no fault can report, an enum no value shows), found by
    parsing, repeated until nothing more goes."""
    while True:
        tree = pyast.parse(module_text)
        names: dict[str, pyast.stmt] = {}
        for node in tree.body:
            if isinstance(node, pyast.FunctionDef):
                names[node.name] = node
            elif isinstance(node, pyast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], pyast.Name):
                names[node.targets[0].id] = node
        refs: dict[str, int] = {}
        for node in tree.body:
            for sub in pyast.walk(node):
                if isinstance(sub, pyast.Name) and sub.id in names and names[sub.id] is not node:
                    refs[sub.id] = refs.get(sub.id, 0) + 1
        dead = [node for name, node in names.items()
                if name.startswith(PRUNABLE) and not refs.get(name)]
        if not dead:
            return module_text
        lines = module_text.split("\n")
        drop: set[int] = set()
        for node in dead:
            drop.update(range(node.lineno - 1, node.end_lineno))
        kept = [line for i, line in enumerate(lines) if i not in drop]
        module_text = _squeeze_blank_lines("\n".join(kept))


def _squeeze_blank_lines(text: str) -> str:
    """At most two blank lines in a row (what a removed definition leaves behind)."""
    out: list[str] = []
    blanks = 0
    for line in text.split("\n"):
        blanks = blanks + 1 if not line.strip() else 0
        if blanks <= 2:
            out.append(line)
    return "\n".join(out)
