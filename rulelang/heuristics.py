"""Rules-declared heuristics (`heuristic p => expr`) and metrics (`metric NAME = expr`).

Both back ends compute the heuristic: `State.heuristic()` (the engine protocol) is the
declared expression for every player, compiled into generated engines like the score. Metrics
are read only by the workbench: it copies the state's variables (`to_json()["vars"]`, the
engine protocol) into an interpreter state of the same checked program and evaluates there;
they are pure and read only state variables and parameters, so the value is the same as on the
compiled state.

The checked program is the one the game was loaded from (a compiled game keeps it, see
rulelang.codegen.load_compiled), never the rules file read again: a worker without the file, a
changed working directory or a file edited since loading change nothing. Only a standalone
engine module (`rulelang compile`) imported without rulelang has no program; its rules file is
checked again then, and a failure is an error, never a silent fall-back to the score.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any


def _protocol_heuristic(state: Any) -> list[int]:
    return state.heuristic()


class _Evaluator:
    """Evaluates a program's heuristic and metrics on states of any back end."""

    def __init__(self, program: Any) -> None:
        from rulelang.interpreter import Game

        self.program = program
        self.igame = Game(program)
        self.proxies: dict[int, Any] = {}
        # how a compiled state gives the heuristic: State.heuristic() (None: no heuristic)
        self.compiled_def: Callable[[Any], list[int]] | None = None

    def bind_compiled(self, game: Any) -> None:
        """Compiled engines compute the heuristic themselves (`State.heuristic()`)."""
        if self.program.heuristic is not None:
            self.compiled_def = _protocol_heuristic

    def _interp_state(self, state: Any) -> Any:
        if getattr(state, "game", None) is self.igame or type(state).__module__.startswith(
                "rulelang.interpreter"):
            return state
        n = state.num_players
        proxy = self.proxies.get(n)
        if proxy is None:
            proxy = self.proxies[n] = self.igame.new_game(n)
        proxy.set_vars(json.loads(state.to_json())["vars"])
        return proxy

    def heuristic(self, state: Any) -> list[int]:
        fn = self.compiled_def
        if fn is not None and not type(state).__module__.startswith("rulelang.interpreter"):
            return fn(state)
        sd = self.program.heuristic
        st = self._interp_state(state)
        return [st._score(sd, p) for p in range(state.num_players)]

    def metrics(self, state: Any) -> list[tuple[str, int]]:
        from rulelang.interpreter.engine import _Evaluator as Ev

        st = self._interp_state(state)
        ev = Ev(st.game, st)
        return [(name, int(ev.eval(md.expr, {}))) for name, md in self.program.metrics.items()]


def program_of(game: Any) -> Any:
    """The checked program behind a loaded game, or None for an object that is no rulelang
    game: the interpreter's own, the one a compiled game was loaded from (kept by
    rulelang.codegen.load_compiled), or, for a standalone engine module imported without
    rulelang, its rules file (the module's SOURCE_NAME) checked again, its digest verified.
    Raises ValueError when that file cannot be checked or has changed."""
    program = getattr(game, "program", None)
    if program is not None:
        return program
    d = getattr(game, "__dict__", None)
    cached = d.get("_rulelang_program") if d is not None else None
    if cached is not None:
        return cached
    module = sys.modules.get(type(game).__module__)
    source = getattr(module, "SOURCE_NAME", None)
    if source is None:
        return None
    from rulelang import RulesError, check_file

    try:
        program = check_file(source, variant=game.variant, params=dict(game.params))
    except RulesError as err:
        raise ValueError(f"the engine of {game.name} was not loaded by rulelang, and its rules "
                         f"file, needed for its heuristic and metrics, cannot be checked: "
                         f"{err}") from None
    if program.digest != game.source_digest:
        raise ValueError(f"{source} changed since its engine was compiled")
    if d is not None:
        d["_rulelang_program"] = program
    return program


def _evaluator(game: Any) -> _Evaluator | None:
    d = getattr(game, "__dict__", None)
    if d is not None and "_rulelang_eval" in d:
        return d["_rulelang_eval"]
    program = program_of(game)
    ev = None
    if program is not None and (program.heuristic is not None or program.metrics):
        ev = _Evaluator(program)
        if getattr(game, "program", None) is None:
            ev.bind_compiled(game)
    if d is not None:
        d["_rulelang_eval"] = ev
    return ev


def declared_heuristic(game: Any) -> Callable[[Any], Sequence[int]] | None:
    """The file's heuristic as a function state -> value per player, or None when it declares
    none (raises ValueError when that cannot be known: see program_of)."""
    ev = _evaluator(game)
    if ev is None or ev.program.heuristic is None:
        return None
    return ev.heuristic


def declared_metrics(game: Any, state: Any) -> list[tuple[str, int]]:
    """The file's declared metrics evaluated on `state`, in declaration order."""
    ev = _evaluator(game)
    if ev is None:
        return []
    return ev.metrics(state)
