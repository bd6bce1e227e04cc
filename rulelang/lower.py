"""Lower the flow (with its phases expanded in place) into a flat, resumable instruction list.

Both back ends run this same list, so the program counter, the frame slots and the pause points
mean the same thing in the interpreter and in generated modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rulelang import ast
from rulelang.program import PAUSES, Program


@dataclass
class Exec:
    stmt: object  # a statement with no pause and no break escaping it


@dataclass
class Bind:
    slot: str
    expr: object


@dataclass
class Jump:
    target: int = -1


@dataclass
class JumpIfNot:
    cond: object
    target: int = -1
    # The flow `while` this tests, if one of its rounds can pass no pause: its body starts are
    # counted against Limits.max_loop_steps (a loop that pauses every round cannot run away).
    loop: ast.While | None = None


@dataclass
class IterInit:
    loop: int
    expr: object


@dataclass
class IterNext:
    loop: int
    slot: str
    target: int = -1  # where to go when exhausted


@dataclass
class ChooseAt:
    node: ast.Choose
    scope: tuple[str, ...]
    loops: tuple[int, ...]
    targets: list[int] = field(default_factory=list)
    # where the `else` block starts (-1: none): taken, without a pause, when no option is legal
    orelse: int = -1


@dataclass
class ChanceAt:
    node: ast.Chance
    scope: tuple[str, ...]
    loops: tuple[int, ...]


@dataclass
class SetPhase:
    name: str | None


@dataclass
class FinishAt:
    pass


@dataclass
class Copy:
    """A local copied to another slot: a re-entered phase's locals are saved before the inner
    activation and restored after it (shadow slots, see _Lowerer.run)."""

    dst: str
    src: str


@dataclass
class DepthFault:
    """A `run` that would open activation depth + 1 of a phase: a RulesRuntimeError there."""

    phase: str
    depth: int
    node: ast.Run


Instr = Exec | Bind | Jump | JumpIfNot | IterInit | IterNext | ChooseAt | ChanceAt | SetPhase \
    | FinishAt | Copy | DepthFault


@dataclass
class Lowered:
    code: list[Instr]
    pauses: list[int]  # pcs of ChooseAt / ChanceAt, in order
    loop_count: int
    loop_elem: dict[int, object]  # loop id -> element type of the collection it walks
    # slots made for re-entered phases (`name@level` saved locals, `name@in` arguments); the
    # lowering registers their types and names in the program's slot tables
    shadows: list[str] = field(default_factory=list)


def needs_lowering(s) -> bool:
    """Whether a statement pauses, ends the game, runs a phase, or breaks out of a flow loop."""
    return _walk(s, in_loop=False)


def _walk(s, in_loop: bool) -> bool:
    if isinstance(s, PAUSES):
        return True
    if isinstance(s, ast.Break):
        return not in_loop
    if isinstance(s, ast.If):
        return any(_walk_block(b, in_loop) for _c, b in s.branches) or (
            s.orelse is not None and _walk_block(s.orelse, in_loop))
    if isinstance(s, ast.For | ast.While):
        return _walk_block(s.body, True)
    return False


def _walk_block(b: ast.Block, in_loop: bool) -> bool:
    return any(_walk(s, in_loop) for s in b.stmts)


class _Lowerer:
    def __init__(self, program: Program) -> None:
        self.p = program
        self.code: list[Instr] = []
        self.loops = 0
        self.loop_elem: dict[int, object] = {}
        self.open: list[str] = []  # the phases being expanded, outermost first
        self.shadows: list[str] = []  # slots added for re-entered phases, in order of creation
        # slot -> the phase whose body (or parameters) binds it
        self.owner: dict[str, str] = {}
        for ph in program.phases.values():
            for node in [*ph.params, *binding_nodes(ph.body)]:
                self.owner[program.slots[node]] = ph.name

    def reaches_without_pause(self, start: int, goal: int) -> bool:
        """Whether the code from `start` can get to `goal` without passing a decision, a chance
        node or the end (jump targets of loops still being lowered point forward of `goal`, or
        nowhere yet, so they leave the region)."""
        seen, todo = set(), [start]
        while todo:
            pc = todo.pop()
            if pc == goal:
                return True
            if pc in seen or not 0 <= pc < len(self.code):
                continue
            seen.add(pc)
            ins = self.code[pc]
            if isinstance(ins, ChooseAt) and ins.orelse >= 0:
                todo.append(ins.orelse)  # a decision with no legal option does not pause
                continue
            if isinstance(ins, ChooseAt | ChanceAt | FinishAt | DepthFault):
                continue
            if isinstance(ins, Jump):
                todo.append(ins.target)
            elif isinstance(ins, JumpIfNot | IterNext):
                todo += [pc + 1, ins.target]
            else:
                todo.append(pc + 1)
        return False

    def emit(self, ins: Instr) -> Instr:
        self.code.append(ins)
        return ins

    def shadow(self, slot: str, tag: str) -> str:
        """A slot holding a copy of `slot` (tag: the number of the activation whose value it
        keeps, or "in" for an argument computed before the parameters are overwritten), typed
        and named like it."""
        new = f"{slot}@{tag}"
        if new not in self.p.slot_types:
            self.p.slot_types[new] = self.p.slot_types[slot]
            self.p.slot_names[new] = f"{self.p.slot_names[slot]}@{tag}"
        if new not in self.shadows:
            self.shadows.append(new)
        return new

    def run(self, s: ast.Run, scope, loops, phase) -> None:
        """`run ph(args)`: the phase's body expanded in place. A phase with `depth N` may be
        open N times at once (the checker makes every phase on a cycle declare one): a run that
        would open one more is a fault there. A run of an open phase first saves that phase's
        locals in scope to shadow slots (`x@k`: activation k's x) and restores them after, so
        each activation keeps its own; the shadows are in scope (JSON, clone) while they hold a
        value. (Only such a run binds an open phase's locals again: a phase it runs that is
        open too is re-entered by a run of its own, which saves that phase's locals.)"""
        p = self.p
        ph = p.phases[s.name]
        depth = ph.depth[0] if ph.depth is not None else 1
        if self.open.count(ph.name) >= depth:
            self.emit(DepthFault(ph.name, depth, s))
            return
        active = self.open.count(ph.name)
        saved = [sl for sl in scope if active and self.owner.get(sl) == ph.name]
        pairs = [(self.shadow(sl, str(active)), sl) for sl in saved]
        for sh, sl in pairs:
            self.emit(Copy(sh, sl))
        inner = _extend(scope, [sh for sh, _sl in pairs])
        self.emit(SetPhase(ph.name))
        slots = [p.slots[f] for f in ph.params]
        if pairs:
            # the arguments may read the parameters they replace: all are computed first
            temps = [self.shadow(sl, "in") for sl in slots]
            for t, a in zip(temps, s.args):
                self.emit(Bind(t, a))
            for sl, t in zip(slots, temps):
                self.emit(Copy(sl, t))
        else:
            for sl, a in zip(slots, s.args):
                self.emit(Bind(sl, a))
        inner = _extend(inner, slots)
        self.open.append(ph.name)
        # A 'break' inside a phase cannot leave it: the checker only allows it in loops.
        self.block(ph.body, inner, [], loops, ph.name)
        self.open.pop()
        for sh, sl in pairs:
            self.emit(Copy(sl, sh))
        self.emit(SetPhase(phase))

    def block(self, b: ast.Block, scope: tuple[str, ...], exits: list, loops: tuple[int, ...],
              phase: str | None) -> None:
        for s in b.stmts:
            scope = self.stmt(s, scope, exits, loops, phase)

    def stmt(self, s, scope, exits, loops, phase) -> tuple[str, ...]:
        p = self.p
        if not needs_lowering(s):
            self.emit(Exec(s))
            if isinstance(s, ast.Let):
                return _extend(scope, [p.slots[s]])
            return scope
        if isinstance(s, ast.Break):
            exits[-1].append(self.emit(Jump()))
        elif isinstance(s, ast.Finish):
            self.emit(FinishAt())
        elif isinstance(s, ast.If):
            ends = []
            for cond, body in s.branches:
                test = self.emit(JumpIfNot(cond))
                self.block(body, scope, exits, loops, phase)
                ends.append(self.emit(Jump()))
                test.target = len(self.code)
            if s.orelse is not None:
                self.block(s.orelse, scope, exits, loops, phase)
            for j in ends:
                j.target = len(self.code)
        elif isinstance(s, ast.While):
            top = len(self.code)
            test = self.emit(JumpIfNot(s.cond))
            exits.append([])
            self.block(s.body, scope, exits, loops, phase)
            back = len(self.code)
            self.emit(Jump(top))
            if self.reaches_without_pause(top + 1, back):
                test.loop = s
            test.target = len(self.code)
            for j in exits.pop():
                j.target = len(self.code)
        elif isinstance(s, ast.For):
            k = self.loops
            self.loops += 1
            self.loop_elem[k] = p.slot_types[p.slots[s]]
            self.emit(IterInit(k, s.iter))
            top = len(self.code)
            nxt = self.emit(IterNext(k, p.slots[s]))
            exits.append([])
            self.block(s.body, _extend(scope, [p.slots[s]]), exits, loops + (k,), phase)
            self.emit(Jump(top))
            nxt.target = len(self.code)
            for j in exits.pop():
                j.target = len(self.code)
        elif isinstance(s, ast.Run):
            self.run(s, scope, loops, phase)
        elif isinstance(s, ast.Choose):
            ch = self.emit(ChooseAt(s, scope, loops))
            ends = []
            for o in s.options:
                ch.targets.append(len(self.code))
                inner = _extend(scope, [p.slots[prm] for prm in o.params])
                self.block(o.body, inner, exits, loops, phase)
                ends.append(self.emit(Jump()))
            if s.orelse is not None:
                ch.orelse = len(self.code)
                self.block(s.orelse, scope, exits, loops, phase)
            for j in ends:
                j.target = len(self.code)
        elif isinstance(s, ast.Chance):
            self.emit(ChanceAt(s, scope, loops))
            return _extend(scope, [p.slots[s]])
        else:
            raise AssertionError(s)
        return scope


def _extend(scope: tuple[str, ...], slots) -> tuple[str, ...]:
    """scope with the slots not already in it (a re-entered phase binds its locals again)."""
    return scope + tuple(sl for sl in slots if sl not in scope)


def binding_nodes(b: ast.Block) -> list:
    """Nodes inside a block that bind a local: lets, loops, chance outcomes, option parameters
    (comprehension variables are not included: they never outlive their expression)."""
    out: list = []

    def block(x: ast.Block) -> None:
        for s in x.stmts:
            if isinstance(s, ast.Let | ast.For | ast.Chance):
                out.append(s)
            if isinstance(s, ast.If):
                for _c, body in s.branches:
                    block(body)
                if s.orelse is not None:
                    block(s.orelse)
            elif isinstance(s, ast.For | ast.While):
                block(s.body)
            elif isinstance(s, ast.Choose):
                for o in s.options:
                    out.extend(o.params)
                    block(o.body)
                if s.orelse is not None:
                    block(s.orelse)

    block(b)
    return out


def lower(program: Program) -> Lowered:
    lw = _Lowerer(program)
    lw.block(program.flow.body, (), [], (), None)
    lw.emit(FinishAt())
    pauses = [i for i, ins in enumerate(lw.code) if isinstance(ins, ChooseAt | ChanceAt)]
    return Lowered(lw.code, pauses, lw.loops, lw.loop_elem, lw.shadows)
