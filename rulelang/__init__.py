"""rulelang: board-game rules as code, run by a reference interpreter or compiled engines."""

from __future__ import annotations

from pathlib import Path

from rulelang._version import __version__
from rulelang.errors import IllegalAction, RulesError, RulesRuntimeError
from rulelang.runtime import CHANCE, TERMINAL, Limits

__all__ = ["CHANCE", "TERMINAL", "IllegalAction", "Limits", "RulesError", "RulesRuntimeError",
           "load", "load_text", "check_file", "__version__"]


def _limits(limits: Limits | dict | None) -> Limits:
    if limits is None:
        return Limits()
    if isinstance(limits, Limits):
        return limits
    if isinstance(limits, dict):
        unknown = sorted(set(limits) - set(Limits.__dataclass_fields__))
        if unknown:
            raise ValueError(f"unknown limit {unknown[0]!r} (known: "
                             f"{', '.join(Limits.__dataclass_fields__)})")
        return Limits(**limits)
    raise TypeError(f"limits must be a rulelang.Limits or a dict, not {type(limits).__name__}")


def check_text(text: str, filename: str = "<rules>", variant: str | None = None,
               params: dict | None = None, limits: Limits | dict | None = None,
               include_dir: str | Path | None = None, _main: str | Path | None = None):
    """Parse and check rules text; returns the checked Program or raises RulesError.

    `include` paths resolve against `include_dir` (check_file and load pass the file's own
    folder); without one, text that includes a file is refused (E045)."""
    from rulelang.check import check
    from rulelang.grammar import parse
    from rulelang.include import expand

    lim = _limits(limits)
    module, included, diags = expand(parse(text, filename), filename, include_dir, parse,
                                     _main)
    if diags:
        raise RulesError(diags, text, included.texts)
    program = check(module, text, filename, variant, params, included)
    program.limits = lim
    return program


def check_file(path: str | Path, variant: str | None = None, params: dict | None = None,
               limits: Limits | dict | None = None):
    return check_text(_read(path), str(path), variant, params, limits, Path(path).parent,
                      path)


def _read(path: str | Path) -> str:
    from rulelang.errors import Diagnostic, Span

    try:
        # utf-8-sig: a byte-order mark some editors write is not part of the rules text.
        return Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesError([Diagnostic("E000", f"cannot read file: {exc}",
                                     Span(str(path), 0, 0))]) from None


def load_text(text: str, filename: str = "<rules>", variant: str | None = None,
              params: dict | None = None, backend: str = "interpreter",
              limits: Limits | dict | None = None, include_dir: str | Path | None = None,
              _main: str | Path | None = None):
    """Load rules from text; see load(). `include` paths resolve against `include_dir`;
    without one, text that includes a file is refused (E045)."""
    program = check_text(text, filename, variant, params, limits, include_dir, _main)
    if backend == "interpreter":
        from rulelang.interpreter import Game

        return Game(program)
    if backend == "compiled":
        from rulelang.codegen import load_compiled

        return load_compiled(program)
    raise ValueError(f"unknown backend {backend!r} (interpreter or compiled)")


def load(path: str | Path, variant: str | None = None, params: dict | None = None,
         backend: str = "interpreter", limits: Limits | dict | None = None):
    """Load a .rules file as a Game (engine protocol, DESIGN.md section 4).

    `limits` (a rulelang.Limits, or a dict of its fields) bounds runaway rules: loop steps
    without a decision, collection sizes and int sizes (docs/language.md, "Limits")."""
    return load_text(_read(path), str(path), variant, params, backend, limits,
                     Path(path).parent, path)
