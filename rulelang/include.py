"""`include "data/x.rules"`: data files spliced into the including file's declarations.

An include names a file relative to the including file's folder, and that file must stay inside
the folder (no absolute path, nothing that resolves outside it, symbolic links included). An
included file holds only data declarations (enum, grid, graph, const, table) and further
includes. Each file is read once: a second include of the same file adds nothing, and a file
that includes itself, directly or through others, is an error. Every included file's bytes are
part of the program digest (Program.digest), so caches and records see an edit to the data.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from rulelang import ast
from rulelang.errors import Diagnostic, RulesError

# What an included file may declare.
DATA_DECLS = (ast.EnumDecl, ast.GridDecl, ast.GraphDecl, ast.ConstDecl, ast.TableDecl,
              ast.IncludeDecl)
_KIND = {ast.GameDecl: "game", ast.PlayersDecl: "players", ast.ParamDecl: "param",
         ast.VariantDecl: "variant", ast.StateDecl: "state", ast.DefDecl: "def",
         ast.PhaseDecl: "phase", ast.FlowDecl: "flow", ast.ScoreDecl: "score",
         ast.MetricDecl: "metric", ast.ViewDecl: "view"}


@dataclass
class Included:
    """The files an include pulled in, in the order first read: shown name -> text, and (path
    relative to the main file's folder, bytes) for the digest, which so does not depend on how
    the main file was named (`rules/x.rules` or an absolute path)."""

    texts: dict[str, str] = field(default_factory=dict)
    raw: list[tuple[str, bytes]] = field(default_factory=list)
    # shown name -> (where the include that pulled it in stands, the file that include is in)
    via: dict[str, tuple[str, str]] = field(default_factory=dict)

    def notes(self, name: str) -> tuple[str, ...]:
        """The `included from FILE:L:C` notes of a diagnostic in file `name`, innermost first
        (none for the main file)."""
        out: list[str] = []
        while name in self.via and len(out) <= len(self.via):
            at, name = self.via[name]
            out.append(f"included from {at}")
        return tuple(out)

    def annotate(self, diags: list[Diagnostic]) -> list[Diagnostic]:
        """The diagnostics, each one in an included file carrying where it was included from."""
        return [d if any(n.startswith("included from ") for n in d.notes)
                or not (notes := self.notes(d.span.file))
                else Diagnostic(d.code, d.message, d.span, (*d.notes, *notes)) for d in diags]


def expand(module: ast.Module, filename: str, folder: str | Path | None, parse,
           main: str | Path | None = None) -> tuple[ast.Module, Included, list[Diagnostic]]:
    """The module with every include replaced by the included file's declarations.

    `folder` is where the including file lives (None: the text came from no file, and an
    include is an error); `main` is that file itself, if there is one. `parse(text, name)`
    parses one file. Returns the module, the files read and the diagnostics (E045, E046)."""
    inc = Included()
    diags: list[Diagnostic] = []
    if not any(isinstance(d, ast.IncludeDecl) for d in module.decls):
        return module, inc, diags
    base = None if folder is None else Path(folder)
    stack = [] if main is None else [(Path(main).resolve(), filename, "")]
    seen = {p for p, _n, _at in stack}
    decls = _expand(module.decls, base, parse, inc, diags, seen, stack, top=True, rel=".")
    inc.via.pop(filename, None)  # the main file itself, included again: not a note on it
    return ast.Module(module.span, tuple(decls)), inc, inc.annotate(diags)


def _expand(decls, folder: Path | None, parse, inc: Included, diags: list[Diagnostic],
            seen: set[Path], stack: list[tuple[Path, str, str]], top: bool, rel: str) -> list:
    out = []
    for d in decls:
        if not isinstance(d, ast.IncludeDecl):
            if not top and not isinstance(d, DATA_DECLS):
                kind = _KIND.get(type(d), type(d).__name__)
                diags.append(Diagnostic(
                    "E046", f"an included file holds only enum, grid, graph, const and table "
                    f"declarations (and includes), not '{kind}'", d.span))
                continue
            out.append(d)
            continue
        target = _resolve(d, folder, diags)
        if target is None:
            continue
        path, name = target
        chain = [p for p, _n, _at in stack]
        if path in chain:
            names = [n for _p, n, _at in stack[chain.index(path):]] + [name]
            diags.append(Diagnostic("E045", "include cycle: " + " -> ".join(names), d.span))
            continue
        if path in seen:
            continue  # already included once: its declarations are there
        seen.add(path)
        data = _read(d, path, name, diags)
        if data is None:
            continue
        text = data.decode("utf-8").removeprefix("\ufeff")
        inc.texts[name] = text
        inc.via.setdefault(name, (f"{d.span}", d.span.file))
        key = posixpath.normpath(posixpath.join(rel, d.path.replace("\\", "/")))
        inc.raw.append((key, data))
        try:
            module = parse(text, name)
        except RulesError as err:
            diags.extend(err.diagnostics)  # expand() adds where the file was included from
            continue
        out.extend(_expand(module.decls, path.parent, parse, inc, diags, seen,
                           [*stack, (path, name, f"{d.span}")], top=False,
                           rel=posixpath.dirname(key) or "."))
    return out


def _resolve(d: ast.IncludeDecl, folder: Path | None, diags) -> tuple[Path, str] | None:
    """(resolved path, display name) of an include, or None after reporting why not."""
    if folder is None:
        diags.append(Diagnostic(
            "E045", "this text was not read from a file, so an include has no folder to "
            "resolve against", d.span,
            ("load the file with rulelang.load(path), or pass include_dir= to load_text",)))
        return None
    rel = d.path
    if not rel or rel.startswith(("/", "\\")) or Path(rel).is_absolute() or (
            len(rel) > 1 and rel[1] == ":"):
        diags.append(Diagnostic("E045", f"include path '{rel}' must be relative to the "
                                "including file's folder", d.span))
        return None
    if "\x00" in rel:
        diags.append(Diagnostic("E045", "include path holds a NUL character", d.span))
        return None
    root = folder.resolve()
    path = (folder / rel).resolve()
    if path != root and root not in path.parents:
        diags.append(Diagnostic("E045", f"include path '{rel}' leads outside the including "
                                f"file's folder ({folder})", d.span))
        return None
    # Shown relative to the including file's own name, as the user would write it.
    name = os.path.normpath(Path(d.span.file).parent / rel if d.span.file else rel)
    return path, name


def _read(d: ast.IncludeDecl, path: Path, name: str, diags) -> bytes | None:
    """The bytes of an included file, if it can be read and is UTF-8 text."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        diags.append(Diagnostic("E045", f"cannot include '{d.path}': it is a folder", d.span))
        return None
    except OSError as exc:
        why = "no such file" if isinstance(exc, FileNotFoundError) else exc.strerror or exc
        diags.append(Diagnostic("E045", f"cannot include '{d.path}': {why}", d.span,
                                (f"looked for {name}",)))
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        diags.append(Diagnostic("E045", f"cannot include '{d.path}': not UTF-8 text (byte "
                                f"{exc.start})", d.span))
        return None
    return data
