"""Names in generated modules, taken from the rules file: decisions after their first option,
chance nodes after their name, flow functions after what starts them (the start, the option or
chance outcome they resume after, a loop variable, a phase), loops after their variable. A
number is added only where two names would clash, counted in the order of the flow, so adding
a `let` renames nothing else."""

from __future__ import annotations

from rulelang.codegen.support import ident, slot_name
from rulelang.lower import ChanceAt, ChooseAt, IterNext, JumpIfNot, Lowered, SetPhase


class Names:
    def __init__(self, lowered: Lowered) -> None:
        self.low = lowered
        taken: set[str] = set()
        self.pause: dict[int, str] = {}  # pc of a decision or chance node -> its name
        for pc in lowered.pauses:
            ins = lowered.code[pc]
            base = (ident(ins.node.options[0].name) if isinstance(ins, ChooseAt)
                    else ident(ins.node.name))
            self.pause[pc] = _unique(base, taken)
        # loop id -> name, from the loop variable's slot. A phase run while it is open is
        # expanded again (rulelang.lower), its loops with new ids but the same slots: each
        # expansion's loop keeps its own iteration state, so each gets its own name.
        self.loop: dict[int, str] = {}
        loop_names: set[str] = set()
        for ins in lowered.code:
            if isinstance(ins, IterNext):
                self.loop[ins.loop] = _unique(slot_name(ins.slot), loop_names)
        # pc -> the phase being run there (None: the flow itself)
        self.phase_at: list[str | None] = []
        cur: str | None = None
        for ins in lowered.code:
            if isinstance(ins, SetPhase):
                cur = ins.name
            self.phase_at.append(cur)
        self._heads: dict[int, str] = {}
        self._head_names: set[str] = set()

    def option_head(self, pc: int, oi: int) -> str:
        ins = self.low.code[pc]
        return f"{self.pause[pc]}_then_{ident(ins.node.options[oi].name)}"

    def heads(self, heads: set[int]) -> dict[int, str]:
        """Function names of the flow's heads (rulelang.codegen.flow), in flow order."""
        code = self.low.code
        resumes: dict[int, str] = {0: "start"}
        for pc in self.low.pauses:
            ins = code[pc]
            if isinstance(ins, ChooseAt):
                for oi, target in enumerate(ins.targets):
                    resumes.setdefault(target, self.option_head(pc, oi))
                if ins.orelse >= 0:
                    resumes.setdefault(ins.orelse, f"{self.pause[pc]}_else")
                resumes.setdefault(pc, f"{self.pause[pc]}_ask")  # after a standing action
            else:
                assert isinstance(ins, ChanceAt)
                resumes.setdefault(pc + 1, f"{self.pause[pc]}_then")
        loop_tests = {ins.target for ins in code if hasattr(ins, "target")
                      and isinstance(ins.target, int)}
        for pc in sorted(heads):
            if pc in self._heads or pc >= len(code):
                continue
            ins = code[pc]
            if pc in resumes:
                base = resumes[pc]
            elif isinstance(ins, IterNext):
                base = f"loop_{self.loop[ins.loop]}"
            elif isinstance(ins, JumpIfNot) and pc in loop_tests:
                base = f"{self.phase_at[pc] or 'flow'}_while"
            else:
                base = f"{self.phase_at[pc] or 'flow'}_part"
            self._heads[pc] = "step_" + _unique(base, self._head_names)
        return {pc: self._heads[pc] for pc in heads if pc in self._heads}


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name
