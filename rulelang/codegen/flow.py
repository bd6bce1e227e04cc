"""Printing the flow: one function per head of the lowered instruction list."""

from __future__ import annotations

from rulelang import ast
from rulelang.codegen.passes import HEAD_INLINE_DEPTH
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
from rulelang.codegen.tree import _block_exprs
from rulelang.lower import (
    Bind,
    ChanceAt,
    ChooseAt,
    Copy,
    DepthFault,
    Exec,
    FinishAt,
    IterInit,
    IterNext,
    Jump,
    JumpIfNot,
    SetPhase,
    binding_nodes,
)


class FlowPrinter:
    def blocks(self) -> tuple[list[str], dict[int, str]]:
        """The flow's functions, laid out as the plan says (passes.plan_flow): one per head,
        named from the rules (naming.Names), with the blocks it reaches copied in. Returns
        (source lines, pc -> function name)."""
        code = self.low.code
        self._end = self.plan.block_end
        self._heads = self.plan.heads
        head_names = self.names.heads(self.plan.heads)
        out: list[str] = []
        names: dict[int, str] = {}
        todo = list(self.plan.roots)
        while todo:
            start = todo.pop(0)
            if start in names or start >= len(code):
                continue
            names[start] = head_names[start]
            self._needed = []
            self._stack = [start]  # heads being copied in, to copy none into itself
            out += ["", "", f"def {names[start]}(s):  # rules:{self._line_at(start)}"]
            out.extend(self._render(start, 1, _Fn()))
            todo.extend(t for t in self._needed if t not in names)
        self.block_names = names
        return out, names

    def _line_at(self, pc: int) -> int:
        """The .rules line where the code at pc comes from."""
        ins = self.low.code[pc]
        for node in (getattr(ins, "stmt", None), getattr(ins, "node", None),
                     getattr(ins, "expr", None), getattr(ins, "cond", None)):
            if node is not None:
                return node.span.line
        nxt = pc + 1 if not hasattr(ins, "target") or ins.target < 0 else ins.target
        return self._line_at(nxt) if nxt != pc and nxt < len(self.low.code) else 0

    def _run_end(self, pc: int, end: int) -> int:
        """The end of the flow statements in a row from pc (Exec instructions, and phase
        changes that print nothing), before `end`."""
        code = self.low.code
        while pc < end and (isinstance(code[pc], Exec) or isinstance(code[pc], SetPhase)
                            and pc in self.plan.redundant_phase_sets):
            pc += 1
        return pc

    def _goto(self, target: int, ind: int, fn: _Fn) -> list[str]:
        if target not in self._heads:
            return self._render(target, ind, fn)
        if target not in self._stack and len(self._stack) <= HEAD_INLINE_DEPTH \
                and target in self.plan.small_heads:
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

        run_end = start  # the flow statements in a row being printed end before this pc
        run: tuple | None = None  # (where their shared reads go, the sink for them)

        def end_run() -> None:
            nonlocal run
            if run is not None:
                sk.lines[run[0]:run[0]] = run[1].lines
                self._loop_outer = None
                run = None

        for pc in range(start, end):
            ins = code[pc]
            sk.memo = {}  # the instructions before may have changed state
            if pc >= run_end:
                end_run()
                if isinstance(ins, Exec):
                    run_end = self._run_end(pc, end)
                    stmts = [code[i].stmt for i in range(pc, run_end) if isinstance(code[i], Exec)]
                    if len(stmts) > 1:
                        # statements in a row read what none of them changes once, before them
                        # (StmtPrinter.invariant_reads): their reads of a name are counted
                        # together
                        run = (len(sk.lines), Sink(fn, ind))
                        self._loop_outer = (run[1], {}, self.invariant_reads(stmts),
                                            self.name_uses(_block_exprs(stmts)))
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
                if self.may_exceed(ins.expr) and self.t(ins.expr).kind == "int":
                    ci.sink.emit(f"s.{slot_attr(ins.slot)} = {self.conv(ins.expr, ci, want)}")
                    self.check_after(ins.expr, ci, f"s.{slot_attr(ins.slot)}")
                else:
                    value = self.kept(ins.expr, self.conv(ins.expr, ci, want))
                    ci.sink.emit(f"s.{slot_attr(ins.slot)} = {value}")
                done(pre)
            elif isinstance(ins, SetPhase):
                if pc not in self.plan.redundant_phase_sets:
                    sk.emit(f"s.phase = {ins.name!r}")
            elif isinstance(ins, Copy):
                sk.emit(f"s.{slot_attr(ins.dst)} = s.{slot_attr(ins.src)}")
            elif isinstance(ins, DepthFault):
                sk.emit(f"fault_phase_depth({ident(ins.phase)!r}, {ins.depth}, "
                        f"{self.L(ins.node.span)})")
                return sk.lines
            elif isinstance(ins, IterInit):
                ci, pre = one(ins.expr)
                it = self.iter_code(ins.expr, ci, snapshot=True)
                name = self.names.loop[ins.loop]
                ci.sink.emit(f"s.it_{name} = {it}")
                ci.sink.emit(f"s.ix_{name} = 0")
                done(pre)
            elif isinstance(ins, IterNext):
                k = ins.loop
                k = self.names.loop[ins.loop]
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
                shared = self.plan.shared_any.get(pc)
                cap = None
                if shared is not None:  # passes.plan_shared_any
                    cap = fn.tmp()
                    sk.emit(f"{cap} = None")
                    self._capture_any = {shared[2]: (cap, self.known_pair(*shared[:2]))}
                try:
                    code = self.ex(ins.cond, ci)
                finally:
                    self._capture_any = {}
                # a flow `while`: its bodies may start max_loop_steps times between two pauses
                count = [] if ins.loop is None else [
                    "s._loops += 1", "if s._loops > LIMIT_LOOP_STEPS:",
                    f"    fault_loop_limit(LIMIT_LOOP_STEPS, {self.L(ins.loop.span)})"]
                if len(sk.lines) == first and (is_true(code) or is_false(code)):
                    # a constant test (`while true`, a folded parameter): one way only
                    if is_true(code):
                        for line in count:
                            sk.emit(line)
                    sk.lines.extend(self._goto(pc + 1 if is_true(code) else ins.target,
                                               ind, fn))
                    return sk.lines
                ci.sink.emit(f"if {code}:")
                done(pre)
                for line in count:
                    sk.emit("    " + line)
                outer = self._pre_choose
                self._pre_choose = (shared[0], cap) if shared is not None else None
                try:
                    sk.lines.extend(self._goto(pc + 1, ind + 1, fn))
                finally:
                    self._pre_choose = outer
                sk.lines.extend(self._goto(ins.target, ind, fn))
                return sk.lines
            elif isinstance(ins, FinishAt):
                sk.emit(f"s.pc = {pc}")
                sk.emit("s.current_player = TERMINAL")
                sk.emit("s._acts = None")
                sk.emit("s._n = 0")
                sk.emit("s._endk = -1")
                sk.emit("return -1")
                return sk.lines
            elif isinstance(ins, ChooseAt):
                w = self.L(ins.node.span)
                sk.emit(f"s.pc = {pc}")
                sk.emit(f"s.current_player = {self.nn(ins.node.player, c)}")
                known = self._pre_choose
                extra = f", {known[1]}" if known is not None and known[0] == pc else ""
                sk.emit(f"acts = legal_{self.names.pause[pc]}(s{extra})")
                if ins.orelse >= 0:  # `choose ... else`: no pause, nothing in the history
                    sk.emit("if not acts:")
                    sk.lines.extend(self._goto(ins.orelse, ind + 1, fn))
                elif not any(not o.params and o.when is None for o in ins.node.options):
                    # (an option with no parameters and no `when` is always listed)
                    sk.emit("if not acts:")
                    sk.emit(f"    fault_no_choice({w})")
                sk.emit("s._acts = acts")
                sk.emit("s._n = len(acts)")
                sk.emit("return -1")
                return sk.lines
            elif isinstance(ins, ChanceAt):
                w = self.L(ins.node.span)
                sk.emit(f"s.pc = {pc}")
                sk.emit("s.current_player = CHANCE")
                if self.chance_mask(ins.node):
                    # the set itself (what outcomes_<name> returns), without the call
                    sk.emit(f"acts = {self.nn(ins.node.domain, Ctx(sink=sk))}")
                else:
                    sk.emit(f"acts = outcomes_{self.names.pause[pc]}(s)")
                sk.emit("if not acts:")
                sk.emit(f"    fault_no_outcome({ident(ins.node.name)!r}, {w})")
                sk.emit("s._acts = acts")
                # the number of outcomes: the members of a set drawn uniformly, or the pairs
                sk.emit("s._n = acts.bit_count()" if self.chance_mask(ins.node)
                        else "s._n = len(acts)")
                sk.emit("s._endk = -1")  # (end_action_index reads it at any pause)
                sk.emit("return -1")
                return sk.lines
            else:
                raise EmitError(ins)
        end_run()
        sk.lines.extend(self._goto(end, ind, fn))
        return sk.lines

    # -- decisions
