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
