"""Rules-declared heuristics (`heuristic p => expr`) and metrics (`metric NAME = expr`).

Both back ends compute the heuristic: `State.heuristic()` (the engine protocol) is the
declared expression for every player, compiled into generated engines like the score. Metrics
are read only by the workbench: it copies the state's variables (`to_json()["vars"]`, the
engine protocol) into an interpreter state of the same checked program and evaluates there;
they are pure and read only state variables and parameters, so the value is the same as on the
compiled state.
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
    """The checked program behind a loaded game (interpreter: kept; compiled: checked again
    from the module's source name, variant and parameters, and its digest verified)."""
    program = getattr(game, "program", None)
    if program is not None:
        return program
    cached = game.__dict__.get("_rulelang_program") if hasattr(game, "__dict__") else None
    if cached is not None:
        return cached
    from rulelang import check_file

    module = sys.modules.get(type(game).__module__)
    source = getattr(module, "SOURCE_NAME", None)
    if source is None:
        return None
    program = check_file(source, variant=game.variant, params=dict(game.params))
    if program.digest != game.source_digest:
        raise ValueError(f"{source} changed since its engine was compiled")
    game.__dict__["_rulelang_program"] = program
    return program


def _evaluator(game: Any) -> _Evaluator | None:
    d = getattr(game, "__dict__", None)
    if d is not None and "_rulelang_eval" in d:
        return d["_rulelang_eval"]
    try:
        program = program_of(game)
    except Exception:  # a game that is not a rulelang engine (tests' fakes): no declarations
        program = None
    ev = None
    if program is not None and (program.heuristic is not None or program.metrics):
        ev = _Evaluator(program)
        if getattr(game, "program", None) is None:
            ev.bind_compiled(game)
    if d is not None:
        d["_rulelang_eval"] = ev
    return ev


def declared_heuristic(game: Any) -> Callable[[Any], Sequence[int]] | None:
    """The file's heuristic as a function state -> value per player, or None."""
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
