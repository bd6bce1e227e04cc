"""Printing decisions (legal-action, string and apply functions) and chance nodes."""

from __future__ import annotations

import re

from rulelang import ast
from rulelang import types as T
from rulelang.codegen.passes import DENSE_TABLE_SPAN, LISTING_MEMO, RANGE_PAIRS
from rulelang.codegen.support import (
    SMALL_ENUM,
    Code,
    Ctx,
    Sink,
    _Fn,
    _Hoist,
    ident,
    is_false,
    is_simple,
    is_true,
    slot_attr,
    strip_parens,
)
from rulelang.lower import (
    ChanceAt,
    ChooseAt,
    binding_nodes,
)

# An option with no `when` over fixed domains of at most this many values gets a constant table.
CONST_ACTIONS = 100_000


class DecisionPrinter:
    def choose_functions(self, pc: int, ins: ChooseAt) -> list[str]:
        """For the decision named d (its first option): legal_d lists the legal (option, args)
        pairs, text_d writes an action's string, apply_d applies the k-th legal action."""
        node = ins.node
        d = self.names.pause[pc]
        line = node.span.line
        out = self._legal_function(pc, node, d, line)
        tables = self._text_tables(d, node)
        out += self._text_functions(d, line, node, tables)
        out += self._apply_function(d, line, ins, tables)
        return out

    def _legal_function(self, pc: int, node, d: str, line: int) -> list[str]:
        """legal_d, with the tables it reads before it (the lines heading the module part of
        the decision).

        An option's `when` is split at its top-level `and`s and each part is tested where the
        plan puts it (passes.plan_options). Sub-expressions that cannot fault are computed once,
        outside the loops that do not change them.
        """
        fn = _Fn()
        pre = Sink(fn, 1)
        self._pc, self._prefix, self._tables = pc, d, []
        listed = {oi for cpc, oi, _ag in self.plan.shared_any.values() if cpc == pc}
        fixed = None if listed or self.p.standing else self._fixed_listing(pc, node, fn, pre)
        if fixed is not None:
            return self._tables + [
                f"def legal_{d}(s):  # rules:{line}: the choices of this decision",
                *pre.lines, *fixed]
        shared: dict[int, str] = {}
        body: list[str] = []
        reuse = self.plan.reused_any.get(pc, {})
        starts: dict[int, str] = {}
        needed = {i for lst in reuse.values() for i, _ag in lst}
        # an option whose `any` a later option asks with other options in between: where its
        # pairs end (len(out) at the later option's test would count theirs too;
        # tests/fixtures/reusedgap.rules)
        far = {i for j, lst in reuse.items() for i, _ag in lst if j > i + 1}
        ends: dict[int, str] = {}
        fresh = True  # `out = []` heads the function (not when the first option takes known)
        first_end = True
        for oi, opt in enumerate(node.options):
            if oi in needed:
                starts[oi] = fn.tmp()
                body.append(f"    {starts[oi]} = len(out)")
            known = {id(ag): f"({ends.get(i, 'len(out)')} > {starts[i]})"
                     for i, ag in reuse.get(oi, ())}
            self._known_any = known
            try:
                if oi in listed:
                    # The (option, args) pairs of the members the test before the decision
                    # found (passes.plan_shared_any). What the option's own listing reads
                    # before its loops is read only when it runs (its own hoisting sink and
                    # names: the options after it hoist their reads again). The list is the
                    # test's own, made for this call: the first option takes it as `out`.
                    own = Sink(fn, 1)
                    lines = self._option(oi, opt, fn, own, dict(shared))
                    if lines:
                        take = not body  # (nothing before it has touched out)
                        lines = ["    if known is not None:",
                                 "        out = known" if take else "        out.extend(known)",
                                 "    else:", *(["        out = []"] if take else []),
                                 *["    " + x for x in own.lines + lines]]
                        fresh = fresh and not take
                    else:
                        lines = own.lines
                else:
                    lines = self._option(oi, opt, fn, pre, shared)
                if opt.name in self.p.end_actions:
                    # where the first end declaration is, for end_action_index(): kept in
                    # a local until the list is made (s._endk is written once, at the end)
                    e = fn.tmp()
                    body.append(f"    {e} = len(out)")
                    body.extend(lines)
                    if first_end:
                        body.append(f"    endk = {e} if len(out) > {e} else -1")
                    else:
                        body.append(f"    if endk < 0 and len(out) > {e}:")
                        body.append(f"        endk = {e}")
                    first_end = False
                else:
                    body.extend(lines)
            finally:
                self._known_any = {}
            if oi in far:
                ends[oi] = fn.tmp()
                body.append(f"    {ends[oi]} = len(out)")
        # (legal_standing reads and sets s._endk after the decision's own options)
        body.append("    s._endk = -1" if first_end else "    s._endk = endk")
        if self.p.standing:
            # the deciding player's standing options (negative option numbers), when this
            # decision has legal actions of its own
            body += ["    if out:", "        legal_standing(s, out)"]
        return self._tables + [
            f"def legal_{d}(s{', known=None' if listed else ''}):  # rules:{line}: "
            "the choices of this decision", *(["    out = []"] if fresh else []),
            *pre.lines, *body, "    return out"]

    def _text_tables(self, d: str, node) -> dict[int, tuple[str, str, int, int]]:
        """option -> (the line making its table of strings, the table's name, lo, step), for the
        options whose strings are made once: one parameter over an enum or a constant int range
        (a tuple), or several (a dict keyed by the argument tuple, step 0: _text_dict)."""
        tables: dict[int, tuple[str, str, int, int]] = {}
        for oi, opt in enumerate(node.options):
            if len(opt.params) > 1:
                keyed = self._text_dict(d, opt)
                if keyed is not None:
                    tables[oi] = keyed
                continue
            if len(opt.params) != 1:
                continue
            t = T.strip(self.p.slot_types[self.p.slots[opt.params[0]]])
            table = f"TEXTS_{d}_{ident(opt.name)}"
            head = repr(ident(opt.name) + "(")
            if t.kind == "enum":
                tables[oi] = (f"{table} = tuple({head} + n + ')' for n in NAMES_{ident(t.name)})",
                              table, 0, 1)
                continue
            bounds = self.const_bounds(opt.params[0].domain) if t.kind == "int" else None
            if bounds is None or not 0 < (bounds[1] - bounds[0]) // bounds[2] + 1 \
                    <= DENSE_TABLE_SPAN:
                continue
            lo, hi, step = bounds
            tables[oi] = (f"{table} = tuple({head} + str(v) + ')' "
                          f"for v in range({lo}, {hi + 1}, {step}))", table, lo, step)
        return tables

    @staticmethod
    def _text_lookup(table_of: tuple[str, str, int, int], args: str) -> str:
        """The string of an option's arguments `args` from its table (an argument is a member
        of the domain: the listing walks it)."""
        _line, table, lo, step = table_of
        if step == 0:  # a dict keyed by the argument tuple (_text_dict)
            return f"{table}[{args}]"
        at = f"{args}[0]" if lo == 0 else f"({args}[0] - {lo})" if lo > 0 \
            else f"({args}[0] + {-lo})"
        return f"{table}[{at if step == 1 else f'{at} // {step}'}]"

    def _text_functions(self, d: str, line: int, node, tables: dict) -> list[str]:
        """text_d (one action's string) and texts_d (a whole listing's)."""
        out = ["", "", f"def text_{d}(opt, args):  # rules:{line}"]
        if self.p.standing:
            out.append("    if opt < 0:")
            out.append("        return text_standing(opt, args)")
        for oi, opt in enumerate(node.options):
            out.append(f"    if opt == {oi}:")
            text = self._text_lookup(tables[oi], "args") if oi in tables \
                else self._text_expr(opt)
            out.append(f"        return {text}")
        out.append("    raise AssertionError(opt)")
        # the strings of a whole listing (legal_actions; a decision may list a thousand bids):
        # without a call for the options whose strings are fixed or in a tuple
        fixed = {oi: repr(ident(opt.name) + "()") if not opt.params
                 else self._text_lookup(tables[oi], "a")
                 for oi, opt in enumerate(node.options) if not opt.params or oi in tables}
        tail = f"text_{d}(o, a)"
        if len(fixed) == len(node.options) and not self.p.standing:
            tail = fixed.pop(len(node.options) - 1)  # (every option listed is one of these)
        chain = "".join(f"{x} if o == {oi} else " for oi, x in fixed.items()) + tail
        return out + ["", "", f"def texts_{d}(acts):  # rules:{line}",
                      f"    return [{chain} for o, a in acts]"]

    def _apply_function(self, d: str, line: int, ins: ChooseAt, tables: dict) -> list[str]:
        """apply_d: the k-th legal action (k already checked): its string, its bindings, then
        the flow resumed; headed by the option's tables of strings."""
        node = ins.node
        out: list[str] = []
        texts = []
        for oi, opt in enumerate(node.options):
            if not opt.params:
                texts.append(repr(ident(opt.name) + "()"))
            elif oi in tables:
                out += ["", "", tables[oi][0]]
                texts.append(self._text_lookup(tables[oi], "args"))
            else:
                texts.append(f"text_{d}({oi}, args)")
        out += ["", "", f"def apply_{d}(s, acts, k):  # rules:{line}"]
        if self.p.standing:
            out.append("    opt, args = acts[k]")
            out.append("    if opt < 0:")
            out.append("        apply_standing(s, opt, args)")
            out.append("        return")
        else:
            out.append("    opt, args = acts[k]" if any(o.params for o in node.options)
                       else "    opt = acts[k][0]")
        out.extend(self._listed_hidden(node))
        out.append(f"    s._seen.append({'-2 - s.current_player' if node.secret else 'None'})")
        branches = []
        for oi, opt in enumerate(node.options):
            lines = [f"{'if' if oi == 0 else 'elif'} opt == {oi}:  "
                     f"# rules:{opt.span.line}: {ident(opt.name)}",
                     f"    s.history.append({texts[oi]})"]
            for i, prm in enumerate(opt.params):
                lines.append(f"    s.{slot_attr(self.p.slots[prm])} = args[{i}]")
            branches.append((lines, ins.targets[oi]))
        out.extend(self.resume_lines("nxt", branches))
        return out

    def _listed_hidden(self, node) -> list[str]:
        """The line of an apply function that lists the entry it is about to add to the
        history, where a `reveal` may make it public (passes.plan_hidden)."""
        if id(node) not in self.plan.hidden_lists:
            return []
        return [f"    s._hidden[{self.plan.hidden_lists[id(node)]}].append(len(s._seen))"]

    def resume_lines(self, target: str, branches=None) -> list[str]:
        """The end of an apply function: run the flow from `target` (code) to the next pause,
        inline when the plan says so (passes.plan_resume_in_apply), else through _run.
        branches: [(lines, pc)] of the options of a decision, each its lines (an `if`/`elif`
        on opt and its body) then the flow from pc, or None (go to target). With
        resume_in_apply, the first block of a known pc is called by its name (the block table
        is indexed only for the blocks after it), and the options' lines go inside the `try`
        (they cannot fault: an action's string and its arguments' bindings)."""
        if branches is not None and not self.plan.resume_in_apply:
            out = ["    " + x for lines, pc in branches
                   for x in [*lines, f"    {target} = {pc}"]]
            return [*out, "    else:", "        raise AssertionError(opt)",
                    f"    _run(s, {target})"]
        if not self.plan.resume_in_apply:
            return [f"    _run(s, {target})"]
        reset = ["    s._loops = 0"] if self.plan.reset_loops else []

        def first(pc) -> str:
            name = self.block_names.get(int(pc)) if pc.isdigit() else None
            return f"pc = {name}(s)" if name is not None else f"pc = _BLOCKS[{pc}](s)"
        if branches is None:
            body = ["        " + first(target)]
        else:
            body = ["        " + x for lines, pc in branches
                    for x in [*lines, "    " + first(str(pc))]]
            body += ["        else:", "            raise AssertionError(opt)"]
        return [*reset,
                "    try:",
                *body,
                "        while pc >= 0:",
                "            pc = _BLOCKS[pc](s)",
                "    except RulesRuntimeError:",
                "        raise",
                "    except (TypeError, IndexError, KeyError, ValueError, ZeroDivisionError,",
                "            AttributeError) as exc:",
                "        raise RulesRuntimeError(f\"internal fault: {exc}\", _where(exc))"
                " from None"]


    def known_pair(self, pc: int, oi: int):
        """The code of the (option, args) pair of one member v for option oi of the decision
        at pc, as a function of v's code: what a test sharing its `any` with the option keeps
        (passes.plan_shared_any), so that the legal function only extends its list with them.
        A shared pair from the option's table when it has one (no tuple built per member)."""
        opt = self.low.code[pc].node.options[oi]
        if self.plan.options[(pc, oi)].small_domain is not None:
            table = f"ARGS_{self.names.pause[pc]}_{ident(opt.name)}"
            return lambda v: f"{table}[{v}]"
        return lambda v: f"({oi}, ({v},))"

    def _domain_printer(self, prm: ast.OParam, dom):
        """A function printing the values of one action parameter (given a context)."""
        if dom.kind == "range":
            lo, hi, step = dom.bounds
            return lambda cc: f"range({lo}, {hi + 1}, {step})"
        if dom.kind == "int":
            return lambda cc: self.ex(prm.domain, cc)
        if dom.kind == "set":

            def dom_set(cc):
                kept = self.kept_members(prm.domain, cc)
                if kept is not None:
                    return kept
                return self.members(self.t(prm.domain), self.nn(prm.domain, cc))
            return dom_set
        if dom.kind == "list":
            # the members of the parameter's type that are in the list, in order (a none in
            # the list matches nothing)
            as_set = T.set_of(T.strip(self.t(prm.domain)).elem)
            return lambda cc: self.members(as_set, f"mask_of_list({self.nn(prm.domain, cc)})")
        t = self.p.slot_types[self.p.slots[prm]]
        return lambda cc: self.domain(t)

    def _text_dict(self, d: str, opt) -> tuple[str, str, int, int] | None:
        """For an option of several parameters, each over an enum, bool or a constant int
        range, with at most DENSE_TABLE_SPAN argument tuples in all: the line that makes every
        tuple's string once, in a dict keyed by the tuple (as the listing makes them: an enum
        member's index, a bool, an int), its name and (0, 0); else None. A lookup hashes a
        small tuple where building the string calls str() per int and joins the pieces: 0.8%
        of a 4-player Acquire game's time went to dispose(sell, trade)'s strings."""
        loops, parts, count = [], [], 1
        for i, prm in enumerate(opt.params):
            t = T.strip(self.p.slot_types[self.p.slots[prm]])
            v = f"v{i}"
            if t.kind == "enum":
                loops.append(f"for {v} in range(len(NAMES_{ident(t.name)}))")
                count *= len(self.p.enums[t.name].members)
            elif t.kind == "bool":
                loops.append(f"for {v} in (False, True)")
                count *= 2
            elif t.kind == "int" and (bounds := self.const_bounds(prm.domain)) is not None:
                lo, hi, step = bounds
                if hi < lo:
                    return None
                loops.append(f"for {v} in range({lo}, {hi + 1}, {step})")
                count *= (hi - lo) // step + 1
            else:
                return None
            parts.append(self._arg_text(t, v))
            if count > DENSE_TABLE_SPAN:
                return None
        table = f"TEXTS_{d}_{ident(opt.name)}"
        key = ", ".join(f"v{i}" for i in range(len(opt.params)))
        joined = " + ', ' + ".join(parts)
        text = f"{ident(opt.name) + '('!r} + {joined} + ')'"
        return (f"{table} = {{({key}): {text} {' '.join(loops)}}}", table, 0, 0)

    @staticmethod
    def _arg_text(t, v: str) -> str:
        """The expression of an argument's text in an action string, the value v of type t."""
        if t.kind == "enum":
            return f"NAMES_{ident(t.name)}[{v}]"
        if t.kind == "bool":
            return f"('true' if {v} else 'false')"
        return f"str({v})"

    def _text_expr(self, opt) -> str:
        """The expression that builds an option's action string from its argument tuple `args`
        (the canonical form of docs/language.md section 14)."""
        parts = [self._arg_text(T.strip(self.p.slot_types[self.p.slots[prm]]), f"args[{i}]")
                 for i, prm in enumerate(opt.params)]
        if not parts:
            return repr(ident(opt.name) + "()")
        joined = " + ', ' + ".join(parts)
        return f"{ident(opt.name) + '('!r} + {joined} + ')'"

    def _fixed_listing(self, pc: int, node, fn: _Fn, pre: Sink) -> list[str] | None:
        """The body of a legal function whose pairs never change: every option has no `when`
        and no parameter, or a table of all its pairs (no `when`, fixed domains), and the
        decision has no standing options. The pairs are one tuple made once, which every call
        returns (O Jogo do Poder's sealed `bid(amount: int in 1..max_bid)` or `no_bid()`: a
        thousand pairs, copied into a new list at every bid and freed after it). None when
        some option's pairs depend on the state. Safe: a listing is only read (indexed,
        counted, walked for its strings; a clone already shares its state's), and the tuple
        holds the pairs the list would, in the same order; the first end declaration's index
        is fixed with them."""
        parts, size, endk = [], 0, -1
        for oi, opt in enumerate(node.options):
            op = self.plan.options[(pc, oi)]
            if opt.params:
                if op.table_size is None or op.table_size > CONST_ACTIONS:
                    return None
                n, part = op.table_size, None
            elif opt.when is None:
                n, part = 1, f"({oi}, ())"
            else:
                return None
            if opt.name in self.p.end_actions and endk < 0 and n:
                endk = size
            size += n
            parts.append((oi, opt, part))
        items = []
        for oi, opt, part in parts:
            if part is None:
                self._option(oi, opt, fn, pre, {})  # (its table of pairs)
                part = f"*ARGS_{self._prefix}_{ident(opt.name)}_ALL"
            items.append(part)
        table = f"PAIRS_{self._prefix}"
        self._tables.append(f"{table} = ({', '.join(items)}{',' if len(items) == 1 else ''})")
        return [f"    s._endk = {endk}", f"    return {table}"]

    def _option(self, oi: int, opt: ast.Option, fn: _Fn, pre: Sink,
                shared: dict[int, str], c: Ctx | None = None) -> list[str]:
        m = len(opt.params)
        c = c or Ctx()
        names, levels = [], {}
        for i, prm in enumerate(opt.params):
            slot = self.p.slots[prm]
            c, var = c.with_local(slot)
            names.append(var)
            levels[slot] = i
        op = self.plan.options[(self._pc, oi)]
        doms = [self._domain_printer(prm, d) for prm, d in zip(opt.params, op.domains)]
        if op.table_size is not None and op.table_size <= CONST_ACTIONS:
            # Every value of fixed domains: the (option, args) pairs are made once.
            codes = [d(Ctx()) for d in doms]
            table = f"ARGS_{self._prefix}_{ident(opt.name)}_ALL"
            loops = " ".join(f"for {n} in {code}" for n, code in zip(names, codes))
            args = "(" + "".join(f"{n}, " for n in names) + ")"
            self._tables.append(f"{table} = tuple(({oi}, {args}) {loops})")
            return [f"    out.extend({table})"]
        size = op.small_domain
        if size is not None:
            # the (option, args) pairs of a one-parameter option, made once (also read by a
            # test sharing its `any` with the option: known_pair)
            table = f"ARGS_{self._prefix}_{ident(opt.name)}"
            # bool values stay bools (False, True): they reach the state JSON as such
            values = ("(False, True)" if self.p.slot_types[self.p.slots[opt.params[0]]].kind
                      == "bool" else f"range({size})")
            self._tables.append(f"{table} = tuple(({oi}, (v,)) for v in {values})")
        placed = {lv: [(a, brk, {slot: Code(str(v), simple=True, const=v)
                                 for slot, v in sub.items()}, rn) for a, brk, sub, rn in tests]
                  for lv, tests in op.placed.items()}
        # a value a test found `!= none` is not none in the tests and code after it
        # (ExprPrinter.known_not_none): each test is a guard of everything printed after it
        facts_from = len(self._not_none)
        try:
            if op.memo_keys is not None:
                return self._memo_lines(oi, opt, fn, pre, shared, c, m, names, levels, op, doms,
                                        placed)
            return self._option_lines(oi, opt, fn, pre, shared, c, m, names, levels, op, doms,
                                      placed)
        finally:
            del self._not_none[facts_from:]

    def _memo_lines(self, oi, opt, fn, pre, shared, c, m, names, levels, op, doms, placed):
        """An option listed once per value of its keys (passes.plan_listing_memo): the keys
        are evaluated first; the pairs made for the same values before are taken from the
        module's LISTED_ dict, else the option is listed into a new list (its tests read the
        keys' temporaries), which the dict keeps."""
        memo = f"LISTED_{self._prefix}_{ident(opt.name)}"
        sk = Sink(fn, 1)
        hoist = _Hoist([pre], levels, -1, shared)
        codes = []
        for e, rn in op.memo_keys:
            code = self._conjunct(e, rn, c.py, {}, sk, hoist, self._key_code)
            codes.append(code)
        key = fn.tmp()
        tup = "".join(f"{x}, " for x in codes)
        sk.emit(f"{key} = {codes[0] if len(codes) == 1 else '(' + tup + ')'}")  # (none: ())
        got = fn.tmp()
        saved = self._out
        self._out = got
        try:
            inner = self._option_lines(oi, opt, fn, pre, shared, c, m, names, levels, op, doms,
                                       placed)
        finally:
            self._out = saved
            self._listing_known = {}
        if not inner:
            return []
        self._tables.append(f"{memo} = {{}}")
        return [*sk.lines, f"    {got} = {memo}.get({key})", f"    if {got} is None:",
                f"        {got} = []", *["    " + x for x in inner],
                f"        if len({memo}) < {LISTING_MEMO}:", f"            {memo}[{key}] = {got}",
                f"    {self._out}.extend({got})"]

    def _key_code(self, e, c: Ctx) -> str:
        """A key's value in a temporary, which the option's tests read where they would
        evaluate the key (ExprPrinter.ex)."""
        code = self.ex(e, c)
        if not is_simple(code):
            t = c.sink.tmp()
            c.sink.emit(f"{t} = {code}")
            code = Code(t, simple=True)
        self._listing_known[self._known_key(e, c)] = code
        return code

    def _option_lines(self, oi, opt, fn, pre, shared, c, m, names, levels, op, doms, placed):
        """The lines of _option after its constant tables: level -1 guards as nested ifs, then
        one loop per parameter. Nothing here changes state, so the results of inlined defs are
        shared down the nest (one memo scope per block)."""
        size = op.small_domain
        table = f"ARGS_{self._prefix}_{ident(opt.name)}"
        hoist_levels = [pre]
        lines: list[str] = []
        inserts: list[tuple[int, Sink]] = []
        ind = 1
        scope = Sink(fn, ind)
        # the scope before the loops, then each loop's body: what the code at the head of
        # loop i (in hoist_levels[i + 1]) may recall is in scopes[i] and its parents
        scopes: list[Sink] = []

        def here(scope):
            return Sink(fn, scope.ind, parent=scope.parent, memo=scope.memo)
        guard: list[str] = []  # tests joined by `and` until one needs statements first
        before: list = []  # the level -1 tests placed so far
        for a, _brk, _sub, rn in placed[-1]:
            sk = here(scope)
            hoist = _Hoist(hoist_levels, levels, -1, shared)
            code = self._conjunct(a, rn, c.py, {}, sk, hoist, self.ex)
            if sk.lines and guard:
                # statements before this test: they go inside the tests so far
                lines.append("    " * ind + f"if {' and '.join(guard)}:")
                guard = []
                ind += 1
                scope = Sink(fn, ind, parent=scope)
                sk.lines[:] = ["    " + x for x in sk.lines]
            lines.extend(sk.lines)
            if is_false(code):  # a folded parameter: the option is never legal
                if all(self.safe(b) for b in before + [a]):
                    return []
                # but the tests before it still run, in order: one of them may fault there
                if guard:
                    lines.append("    " * ind + f"if {' and '.join(guard)}:")
                    lines.append("    " * ind + "    pass")
                return lines
            before.append(a)
            if not is_true(code):
                guard.append(code)
            if not rn:
                self._not_none.extend(self._none_facts(a, "and"))
        if guard:
            lines.append("    " * ind + f"if {' and '.join(guard)}:")
            ind += 1
            scope = Sink(fn, ind, parent=scope)
        scopes.append(scope)
        for i in range(m):
            if i == m - 1 and op.slice_tests is not None:
                self._slice_lines(oi, opt, fn, c, names, levels, op, placed[i], ind, scopes,
                                  hoist_levels, shared, lines)
                break
            sk = here(scope)
            dc = Ctx(c.py, sk, _Hoist(hoist_levels, levels, i - 1, shared))
            refine = self._domain_refiner(op.filters[i], c.py) if op.filters.get(i) else None
            walk = self.set_walk(opt.params[i].domain, dc, names[i], refine) \
                if op.domains[i].kind == "set" else None
            if walk is None and refine is not None:
                dom = self.members(self.t(opt.params[i].domain),
                                   refine(self.nn(opt.params[i].domain, dc), dc))
                lines.extend(sk.lines)
                lines.append("    " * ind + f"for {names[i]} in {dom}:")
            elif walk is None:
                dom = doms[i](dc)
                lines.extend(sk.lines)
                lines.append("    " * ind + f"for {names[i]} in {dom}:")
            else:
                lines.extend(sk.lines)
                lines.extend("    " * ind + x for x in walk[0])
                lines.extend("    " * (ind + 1) + x for x in walk[1])
            fn.loops += 1
            ind += 1
            scope = Sink(fn, ind, parent=scope)
            scopes.append(scope)
            level_sink = Sink(fn, ind)
            hoist_levels.append(level_sink)
            inserts.append((len(lines), level_sink))
            tests, t_ind = scope, ind
            # (printed aside, with a memo of its own: nothing it remembers outlives a refusal)
            guards = self._listing_guards(placed[i], c, _Hoist(hoist_levels, levels, i, shared),
                                          Sink(fn, ind, parent=scope)) if i == m - 1 else None
            if guards is not None:
                # every test is `not D(x)`, D guarded (passes.plan_def_guards): while no guard
                # holds, every value passes and none is tested
                lines.append("    " * ind + f"if {' or '.join(guards)}:")
                t_ind += 1
                tests = Sink(fn, t_ind, parent=scope)
            for a, brk, sub, rn in placed[i]:
                sk = here(tests)
                hoist = _Hoist(hoist_levels, levels, i, shared)
                code = self._conjunct(a, rn, c.py, sub, sk, hoist, self.ex_not)
                lines.extend(sk.lines)
                note = "  # then no value of the loop inside passes either" if sub else ""
                lines.append("    " * t_ind + f"if {code}:{note}")
                lines.append("    " * t_ind + f"    {'break' if brk else 'continue'}")
                if not sub and not rn:
                    self._not_none.extend(self._none_facts(a, "and"))
        if op.slice_tests is not None:
            pass
        elif size is not None:
            lines.append("    " * ind + f"{self._out}.append({table}[{names[0]}])")
        else:
            args = "(" + "".join(f"{n}, " for n in names) + ")"
            lines.append("    " * ind + f"{self._out}.append(({oi}, {args}))")
        for pos, sk in reversed(inserts):
            lines[pos:pos] = sk.lines
        return lines

    def _slice_lines(self, oi, opt, fn, c, names, levels, op, tests, ind, scopes, hoist_levels,
                     shared, lines: list[str]) -> None:
        """The last parameter's loop of an option of two parameters or more whose passing
        values are one run of a constant range (passes.plan_range_slices): the run's first
        index is found by a binary search on the rising tests (the first index where all
        hold), its end by one on the falling tests from there (the first index where one
        fails), and `out` is extended with that slice of the pairs made once (for the values
        of the parameters before it). The searches go at the head of the loop of the tests'
        last parameter (with what is computed there, hoist_levels; they recall only what was
        computed before that loop, scopes), the slice where the pairs are listed. (Probing
        the range's ends first measured 0.96x on O Jogo do Poder `advanced`, whose players'
        cash is often below the range's top.)"""
        m = len(names)
        x = names[-1]
        lo, hi, step = op.domains[m - 1].bounds
        n = (hi - lo) // step + 1
        end, top, mid = fn.tmp(), fn.tmp(), fn.tmp()
        # the searches' place: the head of loop `at` (before its own tests), m >= 2
        at = max(op.slice_level, 0)
        target = hoist_levels[at + 1]
        buf: list[str] = []
        spliced: list[tuple[int, Sink]] = []
        pad = "    " * target.ind

        def search(low: str, falls: bool) -> None:
            # the first index from `low` at which the tests of one kind do not all hold
            # (falls), or all hold (not falls): the run's end, or its start
            buf.append(pad + f"{top} = {n}")
            buf.append(pad + f"while {low} < {top}:")
            buf.append(pad + f"    {mid} = ({low} + {top}) // 2")
            buf.append(pad + f"    {x} = {_value(mid, lo, step)}")
            level_sink = Sink(fn, target.ind + 1)
            hoist_levels[m:] = [level_sink]
            spliced.append((len(buf), level_sink))
            body = Sink(fn, target.ind + 1, parent=scopes[at])
            for (a, _brk, sub, rn), kind in zip(tests, op.slice_tests):
                if kind != falls:
                    continue
                sk = Sink(fn, body.ind, parent=body.parent, memo=body.memo)
                code = self._conjunct(a, rn, c.py, sub, sk, _Hoist(hoist_levels, levels, m - 1,
                                                                   shared), self.ex_not)
                buf.extend(sk.lines)
                buf.append(pad + f"    if {code}:")
                buf.append(pad + (f"        {top} = {mid}" if falls
                                  else f"        {low} = {mid} + 1"))
                buf.append(pad + "        continue")
            buf.append(pad + (f"    {low} = {mid} + 1" if falls else f"    {top} = {mid}"))

        first = "0"  # (no rising test: the run starts at the range's start)
        if False in op.slice_tests:
            first = fn.tmp()
            buf.append(pad + f"{first} = 0")
            search(first, False)
        if True in op.slice_tests:
            buf.append(pad + f"{end} = {first}")
            search(end, True)
        else:
            buf.append(pad + f"{end} = {n}")
        for pos, sk in reversed(spliced):
            buf[pos:pos] = sk.lines
        target.lines.extend(buf)
        pad = "    " * ind
        name = f"ROWS_{self._prefix}_{ident(opt.name)}"
        key = names[0] if m == 2 else "(" + "".join(f"{v}, " for v in names[:-1]) + ")"
        outer = "".join(f"{v}, " for v in names[:-1])
        self._tables.append(f"{name} = {{}}")
        row = fn.tmp()
        lines += [pad + f"if {end} > {first}:",
                  pad + f"    {row} = {name}.get({key})",
                  pad + f"    if {row} is None:",
                  pad + f"        {row} = tuple(({oi}, ({outer}v, )) for v in range({lo}, "
                        f"{hi + 1}, {step}))",
                  pad + f"        if len({name}) < {max(1, RANGE_PAIRS // n)}:",
                  pad + f"            {name}[{key}] = {row}",
                  pad + f"    {self._out}.extend({row}[{first}:{end}])"]

    def _listing_guards(self, placed: list, c: Ctx, hoist: _Hoist, sk: Sink) -> list | None:
        """The guards of the innermost loop's tests when each test is `not D(...)` with D a
        guarded def (passes.plan_def_guards) and none breaks out of the loop: their codes,
        computed before the loops. None otherwise."""
        if not placed:
            return None
        names = []
        for a, brk, sub, _rn in placed:
            if brk or sub or not isinstance(a, ast.Not) \
                    or not isinstance(a.operand, ast.Call) \
                    or self.p.refs[a.operand][0] != "def" \
                    or a.operand.name not in self.plan.def_guards \
                    or not self.args_safe(a.operand):
                return None
            names.append(a.operand.name)
        codes = [self.guard_code(n, Ctx(c.py, sk, hoist)) for n in names]
        if sk.lines or any(is_true(x) for x in codes):
            return None
        return codes

    def _domain_refiner(self, filters: list, py: dict):
        """The mask of a set domain with the `in` / `not in` tests folded into it
        (passes.plan_domain_filters): each set S evaluated before the loop, ANDed (or its
        complement ANDed) into the mask."""
        def refine(mask: str, cc: Ctx) -> str:
            parts = [_operand(mask)]
            for s, keep, rn in filters:
                code = self._conjunct(s, rn, py, {}, cc.sink, cc.hoist, self.ex)
                parts.append(("" if keep else "~") + _operand(code))
            return Code(" & ".join(parts))
        return refine

    def _conjunct(self, a, rn: dict, py: dict, sub: dict, sk: Sink, hoist: _Hoist, emit) -> str:
        """The code of one placed `when` conjunct (emit: ex or ex_not). A conjunct from an
        expanded def (passes.plan_options) has each of the def's parameters bound to the code
        of the option-scope name or literal it stands for (evaluated here: it cannot fault),
        and bounded as it is (passes.plan_int_ranges)."""
        if not rn:
            return emit(a, Ctx({**py, **sub}, sk, hoist))
        inner = dict(py)
        for slot, node in rn.items():
            code = self.ex(node, Ctx(py, sk, hoist))
            if not is_simple(code):
                t = sk.tmp()
                sk.emit(f"{t} = {code}")
                code = Code(t, simple=True)
            inner[slot] = code
        saved = self._int_env
        self._int_env = {**saved, **self.param_bounds(rn.items())}
        try:
            return emit(a, Ctx({**inner, **sub}, sk, hoist))
        finally:
            self._int_env = saved

    def standing_functions(self) -> list[str]:
        """legal_standing appends the standing options of s.current_player that are legal, as
        option numbers -1, -2, ... (in declaration order); text_standing writes one;
        apply_standing runs one (public history) and asks the same decision again."""
        fn = _Fn()
        pre = Sink(fn, 1)
        shared: dict[int, str] = {}
        self._pc, self._prefix, self._tables, self._known_any = "standing", "standing", [], {}
        body: list[str] = []
        flat = [(sd, opt) for sd in self.p.standing for opt in sd.options]
        players, heads = {}, []
        for sd in self.p.standing:
            c, var = Ctx().with_local(self.p.slots[sd])
            players[sd] = c
            heads.append(f"    {var} = s.current_player")
        for j, (sd, opt) in enumerate(flat):
            oi = -1 - j
            if opt.name in self.p.end_actions:
                e = fn.tmp()
                body.append(f"    {e} = len(out)")
                body.extend(self._option(oi, opt, fn, pre, shared, players[sd]))
                body.append(f"    if s._endk < 0 and len(out) > {e}:")
                body.append(f"        s._endk = {e}")
            else:
                body.extend(self._option(oi, opt, fn, pre, shared, players[sd]))
        line = self.p.standing[0].span.line
        out = self._tables + [f"def legal_standing(s, out):  # rules:{line}: standing options"]
        out += heads + pre.lines + body
        out += ["", "", f"def text_standing(opt, args):  # rules:{line}"]
        for j, (_sd, opt) in enumerate(flat):
            out.append(f"    if opt == {-1 - j}:")
            out.append(f"        return {self._text_expr(opt)}")
        out.append("    raise AssertionError(opt)")
        out += ["", "", f"def apply_standing(s, opt, args):  # rules:{line}"]
        out.append("    s.history.append(text_standing(opt, args))")
        out.append("    s._seen.append(None)  # public, even at a secret decision")
        for j, (sd, opt) in enumerate(flat):
            out.append(f"    {'if' if j == 0 else 'elif'} opt == {-1 - j}:  "
                       f"# rules:{opt.span.line}: {ident(opt.name)}")
            c = Ctx()
            c, pvar = c.with_local(self.p.slots[sd])
            out.append(f"        {pvar} = s.current_player")
            for i, prm in enumerate(opt.params):
                c, var = c.with_local(self.p.slots[prm])
                out.append(f"        {var} = args[{i}]")
            for node in binding_nodes(opt.body):
                c, _ = c.with_local(self.p.slots[node])
            out.extend(self.stmts(list(opt.body.stmts), Ctx(c.py, Sink(_Fn(), 2)), 2))
        out.append("    else:")
        out.append("        raise AssertionError(opt)")
        out.append("    s._acts = None")
        out.append("    # the same decision, asked again")
        out.extend(self.resume_lines("s.pc"))
        return out

    def chance_mask(self, node) -> bool:
        """Whether the outcomes of a chance node are the set itself (a bit mask: no weight, a
        set domain), else a list of (value, weight) pairs."""
        return node.weight is None and T.strip(self.t(node.domain)).kind == "set"

    def chance_functions(self, pc: int, ins: ChanceAt) -> list[str]:
        """For the chance node c: outcomes_c lists [(value, weight)] in outcome order (or the
        set itself when every member weighs 1), text_c writes an outcome's string, apply_c
        applies the k-th outcome."""
        node = ins.node
        c_name = self.names.pause[pc]
        line = node.span.line
        slot = self.p.slots[node]
        fn = _Fn()
        t = T.strip(self.p.slot_types[slot])
        sk = Sink(fn, 1)
        c = Ctx(sink=sk)
        out = [f"def outcomes_{c_name}(s):  # rules:{line}: outcomes of chance "
               f"'{ident(node.name)}'"]
        if self.chance_mask(node):
            dom = self.nn(node.domain, c)
            sk.emit(f"return {dom}")
        else:
            it = self.iter_code(node.domain, c)
            ci, var = c.with_local(slot)
            sk.emit("ws = {}")
            sk.emit(f"for {var} in {it}:")
            fn.loops += 1
            body = sk.deeper()
            w = self.nn(node.weight, ci.at(body)) if node.weight is not None else "1"
            body.emit(f"w = {w}")
            if node.weight is not None:
                body.emit("if w < 0:")
                body.emit(f"    fault_weight({self.L(node.weight.span)})")
            body.emit(f"ws[{var}] = ws.get({var}, 0) + w")
            sk.emit("return [(v, w) for v, w in ws.items() if w > 0]")
        out.extend(sk.lines)
        out += ["", ""]
        prefix = ident(node.name) + "("
        if t.kind == "enum":
            out.append(f"TEXTS_{c_name} = tuple({prefix!r} + n + ')' "
                       f"for n in NAMES_{ident(t.name)})")
            out += ["", "", f"def text_{c_name}(v):", f"    return TEXTS_{c_name}[v]"]
        elif t.kind == "bool":
            out += [f"def text_{c_name}(v):",
                    f"    return {prefix!r} + ('true' if v else 'false') + ')'"]
        else:
            out += [f"def text_{c_name}(v):", f"    return {prefix!r} + str(v) + ')'"]
        # apply: the k-th outcome (k already checked)
        masked = self.chance_mask(node)
        apply_lines = []
        if masked and t.kind == "bool":
            apply_lines.append("    v = BOOL_MEMBERS[acts][k]")
        elif masked and t.kind == "enum" and len(self.p.enums[t.name].members) <= SMALL_ENUM:
            apply_lines.append("    v = SMALL_BITS[acts][k]")
        elif masked:
            # runtime.kth_bit written out (a frame less per draw; Acquire draws from a bag of
            # 108 tiles about 70 times a game): k is not read after it
            apply_lines += [
                "    shift = 0",
                "    word = acts & 0xFFFFFFFF",
                "    n = word.bit_count()",
                "    while k >= n:",
                "        k -= n",
                "        shift += 32",
                "        word = (acts >> shift) & 0xFFFFFFFF",
                "        n = word.bit_count()",
                "    members = SMALL_BITS[word & 0xFF]",
                "    while k >= len(members):",
                "        k -= len(members)",
                "        word >>= 8",
                "        shift += 8",
                "        members = SMALL_BITS[word & 0xFF]",
                "    v = shift + members[k]"]
        else:
            apply_lines.append("    v = acts[k][0]")
        apply_lines.append(f"    s.{slot_attr(slot)} = v")
        apply_lines.append(f"    s.history.append("
                           f"{f'TEXTS_{c_name}[v]' if t.kind == 'enum' else f'text_{c_name}(v)'})")
        if node.seen_by is None:
            apply_lines.append("    s._seen.append(None)")
        else:
            # who sees the outcome, read after it is bound (`seen by` may name it)
            vs = Sink(fn, 1)
            who = self.ex(node.seen_by, Ctx(sink=vs))
            apply_lines.extend(vs.lines)
            apply_lines.extend(self._listed_hidden(node))
            if self.optional(node.seen_by):
                apply_lines.append(f"    who = {who}")
                apply_lines.append("    s._seen.append(-1 if who is None else who)")
            else:
                apply_lines.append(f"    s._seen.append({who})")
        apply_lines.extend(self.resume_lines(str(pc + 1)))
        out += ["", "", f"def apply_{c_name}(s, acts, k):  # rules:{line}", *apply_lines]
        return out


def _value(index: str, lo: int, step: int) -> str:
    """The value at `index` (a name) of a range from lo by step."""
    scaled = index if step == 1 else f"{index} * {step}"
    return scaled if lo == 0 else f"{lo} + {scaled}" if lo > 0 else f"{scaled} - {-lo}"


def _operand(code: str) -> str:
    """code as an operand of `&` or `~`: a name or a subscript as it is, else parenthesised."""
    if re.fullmatch(r"[\w.]+(\[[\w.]+\])*", code):
        return code
    return f"({strip_parens(code)})"
