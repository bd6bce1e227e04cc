"""Diagnostics and the three error classes every back end raises."""

from __future__ import annotations

from dataclasses import dataclass, field

# The two run-time error classes live in the runtime, whose source generated engines copy.
from rulelang.runtime import IllegalAction, RulesRuntimeError

__all__ = ["Diagnostic", "IllegalAction", "NO_SPAN", "RulesError", "RulesRuntimeError", "Span"]


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
        out = [f"{self.span}: error[{self.code}]: {self.message}"]
        if source is not None and self.span.line > 0:
            lines = source.splitlines()
            if self.span.line <= len(lines):
                text, at = _window(lines[self.span.line - 1].expandtabs(1),
                                   max(self.span.col - 1, 0))
                gutter = f"{self.span.line:>5} | "
                out.append(gutter + text)
                out.append(" " * (len(gutter) + at) + "^")
        out.extend(f"  note: {n}" for n in self.notes)
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
