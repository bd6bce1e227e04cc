"""Diagnostics and the three error classes every back end raises."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

# The two run-time error classes live in the runtime, whose source generated engines copy.
from rulelang.runtime import IllegalAction, RulesRuntimeError

__all__ = ["Diagnostic", "IllegalAction", "NO_SPAN", "RulesError", "RulesRuntimeError", "Span",
           "fault_text", "load_fault_error"]


@dataclass(frozen=True, slots=True)
class Span:
    """A location in a .rules file (1-based line and column)."""

    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        if self.line <= 0:  # about the file or the command line as a whole
            return self.file
        return f"{self.file}:{self.line}:{self.col}"


NO_SPAN = Span("<builtin>", 0, 0)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    span: Span
    notes: tuple[str, ...] = field(default=())

    def render(self, source: str | None = None) -> str:
        # (a fault found while loading has no code: "error:", see load_fault_error)
        label = f"error[{self.code}]" if self.code else "error"
        return _render(self.span, label, self.message, source, self.notes)


def _render(span: Span, label: str, message: str, source: str | None,
            notes: tuple[str, ...] | list[str]) -> str:
    """`file:line:col: label: message`, the source line with a caret under the column (when
    `source` is given and has that line), then the notes."""
    out = [f"{span}: {label}: {message}"]
    if source is not None and span.line > 0:
        lines = source.splitlines()
        if span.line <= len(lines):
            text, at = _window(lines[span.line - 1].expandtabs(1), max(span.col - 1, 0))
            gutter = f"{span.line:>5} | "
            out.append(gutter + text)
            out.append(" " * (len(gutter) + at) + "^")
    out.extend(f"  note: {n}" for n in notes)
    return "\n".join(out)


# The most characters of a source line an excerpt shows: a longer line (a generated file's, or
# one long expression) is cut to this many around the column, "..." marking each cut.
EXCERPT_WIDTH = 100


def _window(text: str, at: int) -> tuple[str, int]:
    """(the part of a source line an excerpt shows, the caret's offset in it) for the 0-based
    column `at`: the whole line when it fits in EXCERPT_WIDTH, else EXCERPT_WIDTH characters
    around the column (its start or its end when the column is near one)."""
    if len(text) <= EXCERPT_WIDTH:
        return text, at
    start = min(max(at - EXCERPT_WIDTH // 2, 0), len(text) - EXCERPT_WIDTH)
    end = start + EXCERPT_WIDTH
    head = "..." if start > 0 else ""
    return head + text[start:end] + ("..." if end < len(text) else ""), len(head) + at - start


class RulesError(Exception):
    """A .rules file that cannot be parsed or checked: carries every diagnostic found."""

    def __init__(self, diagnostics: list[Diagnostic], source: str | None = None,
                 sources: dict[str, str] | None = None) -> None:
        self.diagnostics = list(diagnostics)
        self.source = source
        self.sources = dict(sources or {})  # the text of other files (includes), by name
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(d.render(self.sources.get(d.span.file, self.source))
                         for d in self.diagnostics)

    def __reduce__(self):
        notes = getattr(self, "__notes__", None)
        return (RulesError, (self.diagnostics, self.source, self.sources),
                {"__notes__": notes} if notes else None)

    def __str__(self) -> str:
        return self.render()


# ---- run-time faults, rendered as diagnostics are -----------------------------------------------

_LOCATION = re.compile(r"(.+):([0-9]+):([0-9]+)")


def fault_span(location: object) -> Span | None:
    """The Span of a RulesRuntimeError's location (`file:line:col`), or None for another
    location (such as `<constants>`)."""
    m = _LOCATION.fullmatch(str(location))
    return Span(m[1], int(m[2]), int(m[3])) if m else None


def _read_source(file: str, line: int, col: int) -> str | None:
    """The text of `file` as it is now, if it can be read and still has column `col` of line
    `line` (a file edited since it was loaded may not: then no excerpt is shown)."""
    try:
        text = Path(file).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    lines = text.splitlines()
    if line > len(lines) or col > len(lines[line - 1].expandtabs(1)) + 1:
        return None
    return text


def fault_text(err: RulesRuntimeError, source: str | None = None) -> str:
    """A run-time fault as `rulelang check` shows a diagnostic: `file:line:col: fault: message`,
    the source line with a caret, then the notes (e.g. "in simulated game 0 (seed s)"). The
    source line is read from the file unless `source` (its text) is given."""
    notes = [str(n) for n in getattr(err, "__notes__", ())]
    span = fault_span(err.location)
    if span is None:
        return "\n".join([f"{err.location}: fault: {err.message}", *(f"  note: {n}"
                                                                      for n in notes)])
    if source is None:
        source = _read_source(span.file, span.line, span.col)
    return _render(span, "fault", err.message, source, notes)


def loading_program(err: BaseException):
    """The Program whose loading raised `err` (a fault while working out its parameters,
    constants, enum fields or table values: rulelang.consts.Constants marks it), or None (a
    fault in a game, or an error that crossed a process boundary, which drops the mark)."""
    return getattr(err, "loading_program", None)


LOADING_NOTE = ("found while loading the rules (working out parameters, constants, enum fields "
                "and table values)")


def load_fault_error(err: BaseException) -> RulesError | None:
    """A fault raised while loading a program, as the RulesError a checker would give (the
    file is refused): a -D / params= int over the int limit as a command-line diagnostic
    (E019), any other fault as an E039 error at its location. None for any other error."""
    if not isinstance(err, RulesRuntimeError):
        return None
    program = loading_program(err)
    if program is None:
        return None
    limits = getattr(program, "limits", None)
    top = getattr(limits, "int_max", None)
    for name, value in getattr(program, "param_values", {}).items():
        if type(value) is int and top is not None and not -top <= value <= top:
            digits = len(str(abs(value)))
            shown = str(value) if digits <= 20 else f"{str(value)[:12]}...{str(value)[-4:]}"
            return RulesError([Diagnostic(
                "E019", f"-D {name}={shown} has {digits} digits, over the "
                        f"limit of {limits.max_int_digits} (max_int_digits)",
                Span("<command line>", 0, 0))])
    span = fault_span(err.location) or Span(str(err.location), 0, 0)
    notes = (*(str(n) for n in getattr(err, "__notes__", ())), LOADING_NOTE)
    return RulesError([Diagnostic("E039", err.message, span, notes)],
                      getattr(program, "source", None),
                      getattr(program, "included_texts", None))
