"""Line layout of generated modules: long lines are broken inside brackets (Python's implicit
line continuation), so the module keeps the project's line length. Layout only: the code's
tokens and their order never change, and a trailing comment stays on the statement's first line
(the line map reads `# rules:N` markers there)."""

from __future__ import annotations

import io
import tokenize

WIDTH = 100
_BREAK_AFTER = {",", "and", "or", "if", "else", "for", "in", "+", "-", "*", "|", "&"}
_OPEN, _CLOSE = "([{", ")]}"


def wrap_module(text: str, width: int = WIDTH) -> str:
    """Every line of the module that is longer than `width` and not inside a docstring (the
    only strings spanning lines in generated code, all written with triple double quotes),
    broken inside its brackets."""
    out: list[str] = []
    in_doc = False
    for line in text.split("\n"):
        if len(line) > width and not in_doc:
            out.extend(wrap_line(line, width))
        else:
            out.append(line)
        if line.count('"""') % 2:
            in_doc = not in_doc
    return "\n".join(out)


def wrap_items(head: str, items: list[str], tail: str, width: int = WIDTH) -> str:
    """`head` + the items joined by commas + `tail`, filled into lines of `width` with a
    hanging indent (a long data literal such as the line map)."""
    lines, cur = [], head
    for item in items:
        piece = item + ", "
        if len(cur) + len(piece.rstrip()) > width:
            lines.append(cur.rstrip())
            cur = " " * 8
        cur += piece
    lines.append(cur.rstrip().rstrip(",") + tail)
    return "\n".join(lines)


def wrap_line(line: str, width: int = WIDTH, _parenthesised: bool = False) -> list[str]:
    """The line, broken after commas and operators inside brackets so that every piece fits
    in `width` where it can; a line that does not tokenise on its own (inside a string) is
    left alone."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [line]
    comment = ""
    code_end = len(line)
    breaks: list[int] = []  # columns after which a break may go
    weak: set[int] = set()  # of those, the ones just inside a subscript: taken last
    depth = 0
    prev = None  # the token before, to tell a subscript's `[` from a list's
    in_fstring = 0  # Python 3.12 tokenises f-strings: never break inside one
    fstring_start = getattr(tokenize, "FSTRING_START", None)
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    for tok in tokens:
        if tok.type == fstring_start:
            in_fstring += 1
        elif tok.type == fstring_end:
            in_fstring -= 1
        if in_fstring:
            continue
        if tok.type == tokenize.COMMENT:
            comment = line[tok.start[1]:]
            code_end = tok.start[1]
            break
        subscript = tok.string == "[" and prev is not None and (
            prev.type == tokenize.NAME or prev.string in (")", "]"))
        prev = tok
        if tok.type == tokenize.OP and tok.string in _OPEN:
            depth += 1
            if tok.start[0] == 1 and tok.end[1] < len(line) and line[tok.end[1]] not in _CLOSE:
                breaks.append(tok.end[1])  # just inside a bracket
                if subscript:
                    weak.add(tok.end[1])
        elif tok.type == tokenize.OP and tok.string in _CLOSE:
            depth -= 1
        elif depth > 0 and tok.string in _BREAK_AFTER and tok.start[0] == 1:
            breaks.append(tok.end[1])
    code = line[:code_end].rstrip()
    indent = len(line) - len(line.lstrip())
    if not breaks and not _parenthesised:
        # No bracket to break in: put the condition or value in parentheses and try again.
        head, body, tail = _split_statement(code[indent:])
        if body:
            again = " " * indent + f"{head}({body}){tail}" + ("  " + comment if comment else "")
            return wrap_line(again, width, _parenthesised=True)
    cont = " " * (indent + 8)
    pieces: list[str] = []
    start = 0
    prefix = ""
    room = width - (len(comment) + 2 if comment else 0)
    while len(prefix) + len(code) - start > room:
        fits = [b for b in breaks if start < b and len(prefix) + b - start <= room]
        # a break inside a subscript (`a[\n i]`) only where no other fits
        fit = [b for b in fits if b not in weak] or fits
        if not fit:
            later = [b for b in breaks if b > start]
            if not later:
                break
            fit = [later[0]]  # cannot fit: break as early as possible
        cut = fit[-1]
        pieces.append(prefix + code[start:cut].rstrip())
        start = cut
        while start < len(code) and code[start] == " ":
            start += 1
        prefix = cont
        room = width
    pieces.append(prefix + code[start:])
    if comment and len(pieces[0]) + 2 + len(comment) <= width:
        pieces[0] = pieces[0] + "  " + comment
    elif comment:  # no room: the comment goes on its own line, just above
        pieces.insert(0, " " * indent + comment)
    return pieces


def _split_statement(stmt: str) -> tuple[str, str, str]:
    """(head, expression, tail) of `if/elif/while e:`, `return e` or `target = e`."""
    for kw in ("if ", "elif ", "while "):
        if stmt.startswith(kw) and stmt.endswith(":"):
            return kw, stmt[len(kw):-1], ":"
    if stmt.startswith("return "):
        return "return ", stmt[len("return "):], ""
    target, eq, value = stmt.partition(" = ")
    if eq and target.replace(".", "").replace("_", "").isalnum():
        return target + eq, value, ""
    return stmt, "", ""
