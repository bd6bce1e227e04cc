"""Play random programs on both back ends in lock step; classify, shrink and write out failures.

A failure is anything but "both back ends did exactly the same thing":
- `rejected`: the checker refuses a program the generator built as well typed;
- `crash`: a back end raised something other than a rulelang error (IndexError in the emitter,
  a SyntaxError in the generated module, ...), or ran past the time limit (a hang);
- `load`: the back ends disagree on loading (one raises, or they raise differently);
- `mismatch`: a step where states, legal actions, chance outcomes, observations or faults
  differ (snapshots from tests/differential/lockstep.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import re
import signal
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path

import rulelang
from rulelang import CHANCE, IllegalAction, RulesError, RulesRuntimeError
from tests.differential.lockstep import _weighted, snapshot

RULES_ERRORS = (RulesError, RulesRuntimeError, IllegalAction)
REPRO_DIR = Path(os.environ.get("RULELANG_REPRO_DIR", "differential-failures"))
MAX_STEPS = 3000


@dataclass
class Failure:
    kind: str  # rejected crash load mismatch
    sig: str  # what must stay the same while shrinking
    detail: str
    data: tuple = ()  # for a step mismatch: the two snapshots

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


class Hang(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float):
    """SIGALRM-based limit (main thread only; elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def on_alarm(signum, frame):
        raise Hang(f"no result after {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _err(exc: BaseException | None):
    """What must agree about an error: its class, message and location."""
    if exc is None:
        return None
    if isinstance(exc, RulesRuntimeError):
        return ("RulesRuntimeError", exc.message, exc.location)
    if isinstance(exc, IllegalAction):
        return ("IllegalAction",)
    return (type(exc).__name__, str(exc))


def _crash(side: str, exc: BaseException) -> Failure:
    tb = traceback.extract_tb(exc.__traceback__)
    where = tb[-1].filename.rsplit("/", 1)[-1] if tb else "?"
    msg = str(exc).splitlines()[0][:200] if str(exc) else ""
    return Failure("crash", f"{side}:{type(exc).__name__}:{where}",
                   f"{side} back end raised {type(exc).__name__}: {msg} (in {where})")


def _call(side: str, fn, *args):
    """(result, rulelang error) from fn(*args); anything else becomes a crash Failure."""
    try:
        return fn(*args), None
    except RULES_ERRORS as exc:
        return None, exc
    except Hang:
        raise
    except RecursionError as exc:
        raise _Crash(_crash(side, exc)) from None
    except Exception as exc:  # noqa: BLE001 - every other exception is a finding
        raise _Crash(_crash(side, exc)) from None


class _Crash(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(str(failure))
        self.failure = failure


def _observations(state) -> list:
    n = state.to_json()
    players = json.loads(n)["num_players"]
    return [state.observation(p) for p in range(players)]


def play_both(text: str, config: dict, filename: str = "random.rules",
              seconds: float = 30.0) -> Failure | None:
    """Load text with config on both back ends and play one game in lock step."""
    before = set(sys.modules)
    try:
        with time_limit(seconds):
            return _play_both(text, config, filename)
    except Hang as exc:
        return Failure("crash", "hang", f"hang: {exc}")
    except _Crash as exc:
        return exc.failure
    finally:
        _forget(before)


def _forget(before: set[str]) -> None:
    """Drop the engine modules loaded since `before`: thousands of programs would not fit."""
    new = [m for m in list(sys.modules) if m not in before and m.startswith("rulelang_engine_")]
    for m in new:
        del sys.modules[m]
    with contextlib.suppress(ImportError):
        from rulelang import cache

        for key, module in list(cache._LOADED.items()):
            if module.__name__ in new:
                del cache._LOADED[key]


def _play_both(text: str, config: dict, filename: str) -> Failure | None:
    from rulelang.codegen import load_compiled
    from rulelang.interpreter import Game

    try:
        program = rulelang.check_text(text, filename, config.get("variant"),
                                      config.get("params") or {})
    except RulesError as exc:
        d = exc.diagnostics[0]
        message = re.sub(r"'[^']*'", "'_'", d.message)
        return Failure("rejected", f"{d.code} {message}",
                       f"checker refused it: {d.render(text).splitlines()[0]}")
    except Exception as exc:  # noqa: BLE001
        return _crash("checker", exc)
    ga, ea = _call("interpreter", Game, program)
    gb, eb = _call("compiled", load_compiled, program)
    if _err(ea) != _err(eb):
        return Failure("load", f"load:{_err(ea) is None}:{_err(eb) is None}",
                       f"loading: interpreter {_err(ea)}, compiled {_err(eb)}")
    if ea is not None:
        return None
    players = config["players"]
    a, ea = _call("interpreter", ga.new_game, players)
    b, eb = _call("compiled", gb.new_game, players)
    if _err(ea) != _err(eb):
        return Failure("mismatch", "new_game fault",
                       f"new_game: interpreter {_err(ea)}, compiled {_err(eb)}")
    if ea is not None:
        return None
    rng = random.Random(config.get("seed", 0))
    for step in range(MAX_STEPS):
        sa, ea = _call("interpreter", snapshot, a)
        sb, eb = _call("compiled", snapshot, b)
        if ea is None and eb is None and sa == sb:
            oa, ea = _call("interpreter", _observations, a)
            ob, eb = _call("compiled", _observations, b)
            sa, sb = (sa, oa), (sb, ob)
        if sa != sb or _err(ea) != _err(eb):
            diff = _diff(sa, sb) if sa is not None and sb is not None else "errors"
            return Failure("mismatch", f"step:{diff}",
                           f"step {step}: {diff} differ: interpreter {_short(sa, ea)}, "
                           f"compiled {_short(sb, eb)}", (sa, sb))
        if a.is_terminal():
            return None
        n = a.num_choices()
        if a.current_player == CHANCE and a.chance_weights() is not None:
            k = _weighted(rng, a.chance_weights())
        elif a.current_player >= 0 and a.end_action_index() >= 0:
            k = a.end_action_index()
        else:
            k = rng.randrange(n)
        text_action = (a.legal_actions() if a.current_player >= 0
                       else [x for x, _p in a.chance_outcomes()])[k]
        # Odd steps take the drivers' fast path, even steps the canonical string.
        fast = step % 2 == 1
        arg = k if fast else text_action
        _r, ea = _call("interpreter", a.apply_index if fast else a.apply, arg)
        _r, eb = _call("compiled", b.apply_index if fast else b.apply, arg)
        if _err(ea) != _err(eb):
            return Failure("mismatch", "fault",
                           f"step {step} {text_action}: interpreter {_err(ea)}, "
                           f"compiled {_err(eb)}")
        if ea is not None:
            # both faulted alike; after apply() the state is what it was before, on both
            if not fast and _call("interpreter", snapshot, a) != _call("compiled", snapshot, b):
                return Failure("mismatch", "after fault",
                               f"step {step}: states differ after the same fault")
            return None
        if step % 10 == 0:
            for side, st in (("interpreter", a), ("compiled", b)):
                copy, _e = _call(side, st.clone)
                if copy.digest() != st.digest():
                    return Failure("mismatch", "clone", f"step {step}: {side} clone differs")
    return Failure("crash", "steps", f"no end after {MAX_STEPS} steps")


def _diff(sa, sb) -> str:
    a = sa[0] if isinstance(sa, tuple) else sa
    b = sb[0] if isinstance(sb, tuple) else sb
    if a != b:
        keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        return ",".join(keys)
    return "observation"


def _short(snap, exc) -> str:
    if exc is not None:
        return repr(_err(exc))
    text = repr(snap)
    return text if len(text) < 400 else text[:400] + "..."


# ---------------------------------------------------------------------------- shrinking


def _closing(lines: list[str], i: int) -> int | None:
    """Index of the line closing the block opened at the end of line i."""
    depth = 0
    for j in range(i, len(lines)):
        s = lines[j]
        depth += s.count("{") - s.count("}")
        if j > i and depth <= 0:
            return j
        if j == i and depth <= 0 and not s.rstrip().endswith("{"):
            return None
    return None


def shrink(text: str, config: dict, failure: Failure, budget: int = 300,
           filename: str = "random.rules") -> str:
    """Delete statements and blocks while the same kind of failure remains (delta debugging
    over lines; a candidate that no longer checks is not the same failure)."""
    def same(candidate: str) -> bool:
        got = play_both(candidate, config, filename, seconds=20.0)
        return got is not None and got.kind == failure.kind and got.sig == failure.sig

    lines = text.splitlines()
    changed = True
    while changed and budget > 0:
        changed = False
        i = len(lines) - 1
        while i >= 0 and budget > 0:
            line = lines[i].strip()
            if not line or line.startswith("#"):
                i -= 1
                continue
            end = i
            if line.endswith("{"):
                close = _closing(lines, i)
                if close is None:
                    i -= 1
                    continue
                end = close if not line.startswith("}") else close - 1
            elif line == "}" or line.startswith("}"):
                i -= 1
                continue
            candidate = lines[:i] + lines[end + 1:]
            budget -= 1
            if same("\n".join(candidate) + "\n"):
                lines = candidate
                changed = True
            i -= 1
    return "\n".join(lines) + "\n"


def write_reproducer(text: str, config: dict, failure: Failure, seed: int) -> Path:
    REPRO_DIR.mkdir(parents=True, exist_ok=True)
    tag = hashlib.sha256(text.encode()).hexdigest()[:10]
    path = REPRO_DIR / f"randprog-{failure.kind}-{tag}.rules"
    head = [f"# random program {seed}: {failure}",
            f"# config: {json.dumps(config, sort_keys=True)}"]
    path.write_text("\n".join(head) + "\n" + text, encoding="utf-8")
    return path


def read_config(path: Path) -> dict:
    """The config line of a reproducer (or fixture) file."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# config: "):
            return json.loads(line[len("# config: "):])
    raise ValueError(f"{path} has no '# config:' line")
