"""Exit codes of the `rulelang` command: one scheme for every subcommand (docs/protocol.md)."""

from __future__ import annotations

OK = 0
# The command could not finish for another reason: an output file that cannot be written once
# the work is done, a game abandoned in `play` (q or end of input), a worker process that
# failed.
FAILURE = 1
# A bad command line: unknown option or command, bad -D syntax or value, unknown parameter or
# variant, a player count the file does not allow, an output path found unwritable before the
# run starts (click's own usage errors are 2 as well).
USAGE = 2
# The .rules file cannot be read, parsed or checked.
RULES = 3
# `replay`: a record that is not JSON, lacks or mistypes a field, holds an action that is not
# legal, or disagrees with the replay (digests, length, final scores or winners, a record that
# claims a result but ends before the game is over).
RECORD = 4
# A fault inside the rules while running them (RulesRuntimeError), e.g. a table lookup with no
# row, in `new_game`, `simulate`'s games or `play`.
FAULT = 5
# Interrupted by Ctrl-C (SIGINT): 128 + 2, as shells report it.
INTERRUPTED = 130

# An unknown variant is reported at the file (line 0) but names a command-line value.
COMMAND_LINE_DIAGNOSTICS = frozenset({"E026"})


def _about_command_line(d) -> bool:
    return d.span.file == "<command line>" or d.code in COMMAND_LINE_DIAGNOSTICS


def for_rules_error(err: BaseException) -> int:
    """USAGE when every diagnostic is about the command line (an unknown or ill-typed -D, a -D
    outside the parameter's range, an unknown variant), else RULES."""
    diags = list(getattr(err, "diagnostics", ()))
    return USAGE if diags and all(_about_command_line(d) for d in diags) else RULES
