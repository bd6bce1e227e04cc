"""Printing the flow: one function per head of the lowered instruction list."""

from __future__ import annotations

from rulelang import ast
from rulelang.codegen.support import (
    Ctx,
    EmitError,
    Sink,
    _Fn,
    _Hoist,
    ident,
    is_false,
    is_true,
    slot_attr,
)
from rulelang.codegen.tree import (
    _stmt_count,
)
from rulelang.lower import (
    Bind,
    ChanceAt,
    ChooseAt,
    Exec,
    FinishAt,
    IterInit,
    IterNext,
    Jump,
    JumpIfNot,
    SetPhase,
    binding_nodes,
)

# An option with no `when` over fixed domains of at most this many values gets a constant table.
CONST_ACTIONS = 100_000
# Flow blocks of at most this many statements are copied into every function that reaches them.
SMALL_BLOCK = 3
# A flow function of at most this many lines is also copied where it is entered (unless it is
# being copied there already), at most this many levels deep.
HEAD_INLINE_LINES = 40
HEAD_INLINE_DEPTH = 2


class FlowPrinter:
    def blocks(self) -> tuple[list[str], dict[int, str]]:
        """One function per head of the flow: the start, every place where a decision or a
        chance outcome resumes, loop heads, and blocks that would otherwise be copied into
        several functions. Every other basic block is inlined into the one function that reaches
        it, so a step usually runs one function from resumption to the next pause. Returns
        (source lines, pc -> function name)."""
        code = self.low.code
        leaders = {0}
        for pc, ins in enumerate(code):
            if isinstance(ins, Jump | JumpIfNot | IterNext):
                leaders.add(ins.target)
                leaders.add(pc + 1)
            if isinstance(ins, IterNext):
                leaders.add(pc)
            if isinstance(ins, ChooseAt):
                leaders.update(ins.targets)
                leaders.update((pc, pc + 1))
            if isinstance(ins, ChanceAt | FinishAt):
                leaders.update((pc, pc + 1))
        order = sorted(x for x in leaders if 0 <= x < len(code))
        self._end = {}
        for i, start in enumerate(order):
            self._end[start] = order[i + 1] if i + 1 < len(order) else len(code)
        succ: dict[int, list[int]] = {}
        weight: dict[int, int] = {}
        roots = [0]
        for start in order:
            end = self._end[start]
            last = code[end - 1]
            if isinstance(last, Jump):
                succ[start] = [last.target]
            elif isinstance(last, JumpIfNot | IterNext):
                succ[start] = [end, last.target]
            elif isinstance(last, ChooseAt):
                succ[start] = []
                roots += list(last.targets)
            elif isinstance(last, ChanceAt):
                succ[start] = []
                roots.append(end)
            elif isinstance(last, FinishAt):
                succ[start] = []
            else:
                succ[start] = [end]
            weight[start] = sum(_stmt_count(ins.stmt) if isinstance(ins, Exec) else 1
                                for ins in code[start:end])
        # Heads: roots and targets of backward jumps (so the rest has no cycle), then, until
        # nothing changes, blocks of some size that would be emitted more than once.
        heads = set(roots)
        for start in order:
            heads.update(t for t in succ[start] if t <= start)
        while True:
            copies = {}
            for b in order:
                copies[b] = 1 if b in heads else 0
            for b in order:
                for t in succ[b]:
                    if t not in heads:
                        copies[t] += copies[b]
            more = {b for b in order if b not in heads and copies[b] > 1
                    and weight[b] > SMALL_BLOCK}
            if not more:
                break
            heads.add(min(more))
        self._heads = heads
        # Size of each head's function, to copy small ones where they are entered from before
        # (a forward jump: no cycle), which saves a round through the dispatcher.
        self._head_lines: dict[int, int] = {}
        self._needed = []
        for h in heads:
            if h < len(code):
                self._stack = [h] * (HEAD_INLINE_DEPTH + 1)  # measuring: inline no head
                self._head_lines[h] = len(self._render(h, 1, _Fn()))
        out: list[str] = []
        names: dict[int, str] = {}
        todo = list(dict.fromkeys(roots))
        while todo:
            start = todo.pop(0)
            if start in names or start >= len(code):
                continue
            name = f"_b{start}"
            names[start] = name
            self._needed: list[int] = []
            self._stack = [start]  # heads being copied in, to copy none into itself
            out.append("")
            out.append(f"def {name}(s):")
            out.extend(self._render(start, 1, _Fn()))
            todo.extend(t for t in self._needed if t not in names)
        return out, names

    def _goto(self, target: int, ind: int, fn: _Fn) -> list[str]:
        if target not in self._heads:
            return self._render(target, ind, fn)
        if target not in self._stack and len(self._stack) <= HEAD_INLINE_DEPTH \
                and self._head_lines.get(target, HEAD_INLINE_LINES + 1) <= HEAD_INLINE_LINES:
            self._stack.append(target)
            lines = self._render(target, ind, fn)
            self._stack.pop()
            return lines
        self._needed.append(target)
        return ["    " * ind + f"return {target}"]

    def _render(self, start: int, ind: int, fn: _Fn) -> list[str]:
        code = self.low.code
        end = self._end[start]
        sk = Sink(fn, ind)
        c = Ctx(sink=sk)

        def one(expr) -> tuple[Ctx, Sink]:
            """A context for the expression of one instruction: state it reads more than once
            is read into Python locals first (nothing changes state in between)."""
            pre = Sink(fn, ind)
            hoist = _Hoist([pre], {}, -1, {}, self.name_uses([expr]), True)
            return Ctx({}, Sink(fn, ind, sk.lines), hoist), pre

        def done(pre: Sink) -> None:
            # the aliases go before the instruction's own lines
            sk.lines[first:first] = pre.lines

        for pc in range(start, end):
            ins = code[pc]
            sk.memo = {}  # the instructions before may have changed state
            first = len(sk.lines)
            if isinstance(ins, Exec):
                # Variables bound inside the statement (loop variables, lets in its blocks) are
                # out of scope at every pause: Python locals will do.
                ce = Ctx(sink=sk)
                for node in binding_nodes(ast.Block(ins.stmt.span, (ins.stmt,))):
                    if node is not ins.stmt or not isinstance(node, ast.Let):
                        ce, _ = ce.with_local(self.p.slots[node])
                sk.lines.extend(self.stmt(ins.stmt, ce, ind))
            elif isinstance(ins, Bind):
                want = self.p.slot_types[ins.slot]
                ci, pre = one(ins.expr)
                value = self.conv(ins.expr, ci, want)
                ci.sink.emit(f"s.{slot_attr(ins.slot)} = {value}")
                done(pre)
            elif isinstance(ins, SetPhase):
                if pc not in self.plan.redundant_phase_sets:
                    sk.emit(f"s.phase = {ins.name!r}")
            elif isinstance(ins, IterInit):
                ci, pre = one(ins.expr)
                it = self.iter_code(ins.expr, ci, snapshot=True)
                ci.sink.emit(f"s.it_{ins.loop} = {it}")
                ci.sink.emit(f"s.ix_{ins.loop} = 0")
                done(pre)
            elif isinstance(ins, IterNext):
                k = ins.loop
                sk.emit(f"if s.ix_{k} < len(s.it_{k}):")
                sk.emit(f"    s.{slot_attr(ins.slot)} = s.it_{k}[s.ix_{k}]")
                sk.emit(f"    s.ix_{k} += 1")
                sk.lines.extend(self._goto(pc + 1, ind + 1, fn))
                sk.lines.extend(self._goto(ins.target, ind, fn))
                return sk.lines
            elif isinstance(ins, Jump):
                sk.lines.extend(self._goto(ins.target, ind, fn))
                return sk.lines
            elif isinstance(ins, JumpIfNot):
                ci, pre = one(ins.cond)
                code = self.ex(ins.cond, ci)
                if len(sk.lines) == first and (is_true(code) or is_false(code)):
                    # a constant test (`while true`, a folded parameter): one way only
                    sk.lines.extend(self._goto(pc + 1 if is_true(code) else ins.target,
                                               ind, fn))
                    return sk.lines
                ci.sink.emit(f"if {code}:")
                done(pre)
                sk.lines.extend(self._goto(pc + 1, ind + 1, fn))
                sk.lines.extend(self._goto(ins.target, ind, fn))
                return sk.lines
            elif isinstance(ins, FinishAt):
                sk.emit(f"s.pc = {pc}")
                sk.emit("s.current_player = TERMINAL")
                sk.emit("s._acts = None")
                sk.emit("return -1")
                return sk.lines
            elif isinstance(ins, ChooseAt):
                w = self.L(ins.node.span)
                sk.emit(f"s.pc = {pc}")
                sk.emit(f"s.current_player = {self.nn(ins.node.player, c)}")
                sk.emit(f"acts = _a{pc}(s)")
                sk.emit("if not acts:")
                sk.emit(f"    fault_no_choice({w})")
                sk.emit("s._acts = acts")
                sk.emit("return -1")
                return sk.lines
            elif isinstance(ins, ChanceAt):
                w = self.L(ins.node.span)
                sk.emit(f"s.pc = {pc}")
                sk.emit("s.current_player = CHANCE")
                sk.emit(f"acts = _o{pc}(s)")
                sk.emit("if not acts:")
                sk.emit(f"    fault_no_outcome({ident(ins.node.name)!r}, {w})")
                sk.emit("s._acts = acts")
                sk.emit("return -1")
                return sk.lines
            else:
                raise EmitError(ins)
        sk.lines.extend(self._goto(end, ind, fn))
        return sk.lines

    # -- decisions
