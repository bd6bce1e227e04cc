"""Python emitter: expressions and statements of a checked program as specialised Python code.

`emit_<Node>` writes one AST node. Values: ints/bools as such, enum and grid members and players
as their index, sets as int bit masks, lists and arrays as Python lists (copied whenever a stored
value is read into another place, so the value semantics of the interpreter hold).

Where code runs as statements (flow blocks, def bodies, legal-action functions) an expression is
emitted with a `Sink`: aggregates and comprehensions become plain loops, small defs (expression
bodies, or lets/ifs/returns) are inlined and their results reused when called again with the same
arguments, and `and`/`or`/`if-then-else` around such code become `if` statements. The order in
which sub-expressions run, and so which run-time fault comes first, is the interpreter's: a value
computed before a later sibling's statements is kept in a temporary unless it cannot fault
(`Emitter.safe`); an `any`/`all` stops early only when its remaining elements cannot fault.

Where nothing changes state (a def, a legal-action function, the expressions of one statement),
state read more than once is read into Python locals first. In legal-action functions the `when`
tests run in the outermost parameter loop that can decide them, may end a loop early (`break`)
when the test can only stay false, and sub-expressions that cannot fault are computed outside the
loops that do not change them (`choose_functions`).

The flow is emitted from the lowered instruction list: one function per head (the start, the
places where a pause resumes, loop heads, shared blocks), into which the basic blocks it leads to
are inlined up to a back edge or a pause.
"""

from __future__ import annotations

from rulelang.codegen.aggregates import AggregatePrinter
from rulelang.codegen.analysis import Analysis
from rulelang.codegen.decisions import DecisionPrinter
from rulelang.codegen.exprs import ExprPrinter
from rulelang.codegen.flow import FlowPrinter
from rulelang.codegen.naming import Names
from rulelang.codegen.passes import Plan, run_passes
from rulelang.codegen.stmts import StmtPrinter
from rulelang.consts import Constants
from rulelang.lower import Lowered
from rulelang.program import Program


class Emitter(Analysis, ExprPrinter, AggregatePrinter, StmtPrinter, FlowPrinter, DecisionPrinter):
    """The code generator for one checked, lowered program: analysis (memoised queries), then
    the optimisation passes (passes.PASSES, run once here), then printing, which follows the
    plan the passes made."""

    def __init__(self, program: Program, lowered: Lowered, consts: Constants) -> None:
        self.p = program
        self.low = lowered
        self.k = consts  # constant values, worked out by the reference evaluator
        # analysis caches
        self._safe: dict[int, bool] = {}
        self._def_safe: dict[str, bool] = {}
        self._free: dict[int, frozenset] = {}
        self._size: dict[str, int] = {}
        self._exceed: dict[int, bool] = {}
        self._bound_env: dict[str, int | None] = {}  # Analysis.safe_with
        # printing: def parameter slot -> bound of the argument it stands for, where the def
        # is expanded in place (Analysis.int_bound)
        self._int_env: dict[str, int | None] = {}
        # printing state
        self.where: dict[str, str] = {}  # .rules location -> name of its constant
        self._pc = -1  # the decision being printed
        self._tables: list[str] = []  # its constant tables
        self._known_any: dict[int, str] = {}  # id(any-aggregate) -> code reusing an option
        # the keys of the option being listed through its memo (passes.plan_listing_memo):
        # (id(expression), codes of the slots it reads) -> the temporary holding its value
        self._listing_known: dict[tuple, str] = {}
        self._out = "out"  # the list the option being printed appends its pairs to
        # flow test being printed: id(any-aggregate) -> list keeping its passing members, and
        # the decision right after the test, with that list (passes.plan_shared_any)
        self._capture_any: dict[int, str] = {}
        # the `for` whose body is being printed: (sink before it, reads made there, keys of
        # reads the body does not change) (StmtPrinter.emit_For)
        self._loop_outer: tuple | None = None
        # expressions known not to be none where the right operand of an `and` (`or`) that
        # tested them is printed (ExprPrinter.known_not_none)
        self._not_none: list = []
        self._pre_choose: tuple[int, str] | None = None
        # def calls being printed behind their guard (passes.plan_def_guards): id(call)
        self._guarded: set[int] = set()
        self._end: dict[int, int] = {}  # flow: basic block start -> end
        self._heads: set[int] = set()  # flow: blocks that start a function
        self._head_lines: dict[int, int] = {}
        self._needed: list[int] = []  # flow: heads the function being printed jumps to
        self._stack: list[int] = []  # flow: heads being copied into the current function
        self.names = Names(lowered)
        self.plan = Plan()
        run_passes(self, self.plan)
