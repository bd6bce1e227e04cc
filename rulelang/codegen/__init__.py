"""The compiler: checked program -> one standalone, optimised Python module.

analysis.py and passes.py decide, the printers (exprs, aggregates, stmts, flow, decisions) write
code as the plan says, module.py assembles the module from templates/engine.py.j2 with exactly
the runtime helpers it calls; the engine cache is rulelang/cache.py.
"""

from __future__ import annotations

from rulelang.codegen.module import compile_program
from rulelang.program import Program

__all__ = ["compile_program", "load_compiled"]


def load_compiled(program: Program):
    """Compile (or reuse the cached module for) a checked program; returns its Game object.

    The game keeps the program it was loaded from (`_rulelang_program`, read by
    rulelang.heuristics for the declared heuristic and metrics), so that nothing reads the rules
    file again. The module (and its one Game) is the same for every program with the same text,
    file name, variant, parameters and limits, so any of them will do."""
    from rulelang import cache

    game = cache.load_compiled(program, compile_program)
    game.__dict__.setdefault("_rulelang_program", program)
    return game
