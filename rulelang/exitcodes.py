"""Exit codes of the `rulelang` command: one scheme for every subcommand (docs/protocol.md)."""

from __future__ import annotations

OK = 0
# The command could not finish for another reason: an output file cannot be written, a game
# abandoned in `play` (q or end of input), a worker process that failed.
FAILURE = 1
# A bad command line: unknown option or command, bad -D syntax or value, unknown parameter or
# variant, a player count the file does not allow (click's own usage errors are 2 as well).
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

# Diagnostics about the command line rather than the file: unknown/ill-typed -D, unknown variant.
COMMAND_LINE_DIAGNOSTICS = frozenset({"E018", "E019", "E026"})


def for_rules_error(err: BaseException) -> int:
    """USAGE when every diagnostic is about the command line (its code, or a value given with
    -D, such as one outside a parameter's range), else RULES."""
    diags = list(getattr(err, "diagnostics", ()))
    on_command_line = [d.code in COMMAND_LINE_DIAGNOSTICS or d.span.file == "<command line>"
                       for d in diags]
    return USAGE if diags and all(on_command_line) else RULES
