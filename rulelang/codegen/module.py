"""Assembling a generated engine module: constants, the printed functions, the flow's
functions and the protocol skeleton (templates/engine.py.j2), then exactly the runtime helpers
it calls, the line layout and the map from generated lines to .rules lines."""

from __future__ import annotations

import dataclasses
import functools
import re
from importlib import resources

import jinja2

from rulelang import types as T
from rulelang.codegen.emitter import Emitter
from rulelang.codegen.helpers import helpers_for, link
from rulelang.codegen.layout import wrap_items, wrap_module
from rulelang.codegen.support import SMALL_ENUM, Code, Ctx, ident, slot_attr
from rulelang.codegen.temps import share_temporaries
from rulelang.consts import Constants
from rulelang.lower import ChanceAt, ChooseAt, JumpIfNot, binding_nodes, lower
from rulelang.program import Program

_MARK = re.compile(r"# rules:(\d+)\b")
_HELPERS_MARK = "# (runtime helpers go here)"
_IMPORTS_MARK = "# (imports go here)"


def _read(name: str) -> str:
    return resources.files("rulelang.codegen").joinpath(name).read_text(encoding="utf-8")


@functools.cache
def _template() -> jinja2.Template:
    """The module skeleton, compiled by Jinja2 once per process."""
    return _environment().get_template("engine.py.j2")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: _read(f"templates/{name}")),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True, autoescape=False)
    env.filters["pyrepr"] = _safe_repr
    env.filters["docsafe"] = _doc_safe
    return env


def _doc_safe(text: str) -> str:
    """Text shown inside the module docstring: anything but plain characters becomes '?'."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in " ._-/:,{}[]=+'()") else "?"
                   for ch in str(text))


def _safe_repr(v) -> str:
    """repr() of plain data only: the one way values from a rules file reach generated code."""
    if v is None or isinstance(v, bool | int | str):
        return repr(v)
    if isinstance(v, tuple | list):
        inner = ", ".join(_safe_repr(x) for x in v)
        if isinstance(v, tuple):
            return f"({inner}{',' if len(v) == 1 else ''})"
        return f"[{inner}]"
    if isinstance(v, frozenset | set):
        return _safe_repr(sorted(v))
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_safe_repr(k)}: {_safe_repr(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"not plain data: {type(v).__name__}")


def _tuple_text(items: list[str]) -> str:
    """A tuple display of names (code, not values)."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _named_repr(v, names: dict) -> str:
    """_safe_repr, with the member-name tuple of an enum written as its constant (NAMES_<Enum>):
    the same value, spelled once."""
    if isinstance(v, tuple) and v in names:
        return names[v]
    if isinstance(v, tuple):
        inner = ", ".join(_named_repr(x, names) for x in v)
        return f"({inner}{',' if len(v) == 1 else ''})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_safe_repr(k)}: {_named_repr(x, names)}"
                               for k, x in v.items()) + "}"
    return _safe_repr(v)


def _flow_bindings(program: Program) -> list:
    """Nodes binding flow locals (kept on the state): lets, loops, options, chance, phase params."""
    out = binding_nodes(program.flow.body)
    for ph in program.phases.values():
        out.extend(ph.params)
        out.extend(binding_nodes(ph.body))
    return out


def _copy_code(t: T.Type, src: str) -> str:
    """Code copying a value of type t (lists are the only mutable values)."""
    if t.kind in ("opt", "any", "none") and T.strip(t).kind in ("list", "array"):
        return f"deep_copy({src})"  # may be none
    t = T.strip(t)
    if t.kind not in ("list", "array"):
        return src
    elem = T.strip(t.elem)
    if elem.kind not in ("list", "array"):
        return f"{src}[:]"
    if t.elem.kind not in ("opt", "any", "none") and T.strip(elem.elem).kind not in (
            "list", "array"):
        return f"[x[:] for x in {src}]"
    return f"deep_copy({src})"  # lists of lists, or of lists that may be none


def compile_program(program: Program, consts: Constants | None = None) -> str:
    """Generate the engine module for a checked program (one variant, one parameter set)."""
    from rulelang._version import __version__

    low = lower(program)
    consts = consts if consts is not None else Constants(program)
    em = Emitter(program, low, consts)

    constants: list[str] = []
    for name, info in program.enums.items():
        constants.append(f"NAMES_{ident(name)} = {_safe_repr(tuple(info.members))}")
        # the members in order, walked (`for c in Chain`): iterating a tuple made once costs
        # less than making a range object each time (Acquire: 1.03x the games/s)
        constants.append(f"ALL_{ident(name)} = tuple(range({len(info.members)}))")
        for i, (fname, ft) in enumerate(info.fields):
            vals = tuple(row[i] for row in consts.enum_fields[name])
            constants.append(f"FIELD_{ident(name)}_{ident(fname)} = "
                             f"{em.literal(vals, T.list_of(ft))}")
            # the members of each value of the field, in order (passes.plan_field_walks): a
            # dict for an int field, else a tuple indexed by the value
            if ft.kind in ("int", "enum", "bool"):
                values = sorted(set(vals)) if ft.kind == "int" else range(
                    2 if ft.kind == "bool" else len(program.enums[ft.name].members))
                groups = [(v, tuple(j for j, x in enumerate(vals) if x == v)) for v in values]
                table = dict(groups) if ft.kind == "int" else tuple(g for _v, g in groups)
                constants.append(f"MEMBERS_{ident(name)}_{ident(fname)} = {_safe_repr(table)}")
        if len(info.members) > SMALL_ENUM:  # one-bit masks made once (ExprPrinter.one_bit)
            n = len(info.members)
            constants.append(f"BIT_{ident(name)} = tuple(1 << i for i in range({n}))")
        if info.grid is not None:
            nb = consts.neighbors[name]
            constants.append(f"NEIGHBORS_{ident(name)} = {_safe_repr([list(x) for x in nb])}")
            masks = [sum(1 << j for j in x) for x in nb]
            constants.append(f"NEIGHBOR_MASKS_{ident(name)} = {_safe_repr(tuple(masks))}")
    for name in program.graphs:
        adj = consts.graphs[name]
        constants.append(f"GRAPH_{ident(name)} = {_safe_repr(adj)}")
        constants.append(f"GRAPH_NEIGHBORS_{ident(name)} = "
                         f"{_safe_repr([[v for v, _w in x] for x in adj])}")
        costs = {(a, b): w for a, x in enumerate(adj) for b, w in x}
        constants.append(f"EDGE_COSTS_{ident(name)} = {_safe_repr(costs)}")
    if program.graphs:  # graph values: a graph's index in declaration order
        for table in ("GRAPH", "GRAPH_NEIGHBORS", "EDGE_COSTS"):
            items = [f"{table}_{ident(name)}" for name in program.graphs]
            constants.append(f"GRAPHS_{table} = {_tuple_text(items)}")
    for name, d in program.consts.items():
        t = T.strip(em.t(d.value)) if d.value in program.types else None
        ct = em.p.types.get(d.value, t)
        if T.strip(ct).kind in ("list", "array"):
            constants.append(f"CONST_{ident(name)} = {em.literal(consts.const_values[name], ct)}")

    functions: list[str] = []
    for d in program.tables.values():
        functions += ["", "", *em.table_function(d)]
    for d in program.defs.values():
        functions += ["", "", *em.def_function(d)]

    blocks, names = em.blocks()
    block_table = [names.get(pc, "None") for pc in range(len(low.code))]

    pauses: list[str] = []
    if program.standing:
        pauses += ["", "", *em.standing_functions()]
    texts, lists, acts, applies = {}, {}, {}, {}
    scopes, loops = {}, {}
    for pc in low.pauses:
        ins = low.code[pc]
        name = em.names.pause[pc]
        if isinstance(ins, ChooseAt):
            pauses += ["", "", *em.choose_functions(pc, ins)]
            acts[pc] = f"legal_{name}"
            lists[pc] = f"texts_{name}"
        else:
            assert isinstance(ins, ChanceAt)
            pauses += ["", "", *em.chance_functions(pc, ins)]
            acts[pc] = f"outcomes_{name}"
        texts[pc] = f"text_{name}"
        applies[pc] = f"apply_{name}"
        scopes[pc] = tuple((key, slot_attr(s), em.desc(program.slot_types[s]))
                           for key, s in zip(program.local_keys(ins.scope), ins.scope))
        loops[pc] = tuple((f"it_{em.names.loop[k]}", f"ix_{em.names.loop[k]}",
                           em.desc(low.loop_elem[k])) for k in ins.loops)

    parse_text, parse_enums = _parse_table(program, low)
    for name in parse_enums:  # a member's index by its name (reading action strings)
        constants.append(f"INDEX_{ident(name)} = "
                         f"{{n: i for i, n in enumerate(NAMES_{ident(name)})}}")

    vars_table = tuple((v.name, f"v_{ident(v.name)}", em.desc(program.state_types[v.name]),
                        v.visibility) for v in program.state_vars)

    init: list[str] = []
    for v in program.state_vars:
        t = program.state_types[v.name]
        vt = program.types[v.init]
        sizes, target = [], t
        while target.kind == "array" and not T.compatible(target, vt):
            sizes.append(em.size_of(target.index))
            target = target.elem
        value = em.kept(v.init, em.conv(v.init, Ctx(), target))
        if sizes:
            value = f"filled({value}, ({', '.join(sizes)},))"
        init.append(f"s.v_{ident(v.name)} = {value}  # rules:{v.span.line}")
    init = init or ["pass"]

    flow_slots = []
    for node in _flow_bindings(program):
        slot = program.slots[node]
        if slot not in flow_slots:
            flow_slots.append(slot)
    flow_slots += [s for s in low.shadows if s not in flow_slots]
    local_attrs = [slot_attr(s) for s in flow_slots]
    loop_attrs = [a for k in range(low.loop_count)
                  for a in (f"it_{em.names.loop[k]}", f"ix_{em.names.loop[k]}")]
    local_attrs += loop_attrs
    # values of defs kept between writes (passes.plan_cached_defs): None until computed
    cache_attrs = [f"c_{ident(name)}" for name in em.plan.cached_defs]
    # guards of defs kept between writes (passes.plan_def_guards)
    cache_attrs += [f"g_{ident(name)}" for name, g in em.plan.def_guards.items()
                    if g.agg is not None]
    # values of defs kept per argument (passes.plan_keyed_defs): a list, None until asked
    keyed_attrs = [f"c_{ident(name)}" for name in em.plan.keyed_defs]
    # members of state sets kept as sorted tuples (passes.plan_kept_members): None until a walk
    kept_attrs = [f"w_{ident(var)}" for var in em.plan.kept_members]
    local_attrs += cache_attrs + keyed_attrs + kept_attrs
    all_attrs = [f"v_{ident(v.name)}" for v in program.state_vars] + local_attrs

    clone = [f"c.v_{ident(v.name)} = " + _copy_code(program.state_types[v.name],
                                                    f"self.v_{ident(v.name)}")
             for v in program.state_vars]
    clone += [f"c.{a} = self.{a}" for a in cache_attrs]
    clone += [f"c.{a} = None" for a in keyed_attrs]  # (the list changes in place: not shared)
    # a kept tuple is never changed (shared); a list of them is (copied)
    clone += [f"c.w_{ident(var)} = self.w_{ident(var)}" if index is None else
              f"c.w_{ident(var)} = None if (w := self.w_{ident(var)}) is None else w[:]"
              for var, index in em.plan.kept_members.items()]
    # Flow locals: only those in scope at the pause (and the loops open there) are copied; the
    # others are dead (each is bound again before it is read) and appear in no JSON.
    clone_fns: list[str] = []
    clone_table = ["None"] * len(low.code)
    for pc in low.pauses:
        ins = low.code[pc]
        body = [f"    c.{slot_attr(sl)} = "
                + _copy_code(program.slot_types[sl], f"s.{slot_attr(sl)}") for sl in ins.scope]
        for k in ins.loops:
            it, ix = f"it_{em.names.loop[k]}", f"ix_{em.names.loop[k]}"
            body += [f"    c.{it} = s.{it}", f"    c.{ix} = s.{ix}"]
        if body:
            name = f"clone_{em.names.pause[pc]}"
            clone_fns += ["", "", f"def {name}(s, c):", *body]
            clone_table[pc] = name

    def scorer(sd) -> list[str]:
        if sd is None:
            return ["return 0"]
        c = Ctx({program.slots[sd]: Code("p", simple=True)})
        return [f"return bounded({em.conv(sd.expr, c, T.INT)}, LIMIT_INT, "
                f"{em.L(sd.expr.span)})  # rules:{sd.span.line}"]

    # Emit everything before rendering: emission registers the location constants.
    score_lines, tiebreak_lines = scorer(program.score), scorer(program.tiebreak)
    heuristic_lines = scorer(program.heuristic) if program.heuristic is not None else None
    params_shown = {n: consts.params[n] for n in program.params}
    member_names = {tuple(info.members): f"NAMES_{ident(name)}"
                    for name, info in program.enums.items() if info.members}
    text = _template().render(
        vars_text=_named_repr(vars_table, member_names),
        scopes_text=_named_repr(scopes, member_names),
        loops_text=_named_repr(loops, member_names),
        game_name=program.name, version=__version__, source_name=program.filename,
        source_digest=program.digest, variant=program.variant,
        included=[name for name, _data in program.included],
        params_lines=[f"{ident(n)} = {_safe_repr(v)}" for n, v in sorted(params_shown.items())],
        helpers=_HELPERS_MARK, imports=_IMPORTS_MARK, min_players=program.min_players,
        max_players=program.max_players,
        variants=tuple(program.variants), params=params_shown,
        end_actions=tuple(sorted(program.end_actions)), constants=constants,
        locations=sorted(((v, k) for k, v in em.where.items()),
                         key=lambda x: tuple(map(int, x[0].split("_")[1:]))),
        functions=functions, blocks=blocks, block_table=block_table, pauses=pauses,
        texts=texts, lists=lists, acts=acts, parse_text=parse_text,
        init=init, all_attrs=all_attrs, cache_attrs=cache_attrs + keyed_attrs + kept_attrs,
        apply_table=[applies.get(pc, "None") for pc in range(len(low.code))],
        clone=clone, clone_fns=clone_fns, clone_table=clone_table,
        local_attrs=tuple(local_attrs), score=score_lines,
        tiebreak=tiebreak_lines, heuristic=heuristic_lines,
        limits=dataclasses.asdict(program.limits),
        static_phase=em.plan.static_phase, hidden_lists=len(em.plan.hidden_lists),
        # chance_weights() is None at every pause when every chance node draws from a set
        masks_only=all(em.chance_mask(low.code[pc].node) for pc in low.pauses
                       if isinstance(low.code[pc], ChanceAt)),
        counted_loops=any(isinstance(ins, JumpIfNot) and ins.loop is not None
                          for ins in low.code))
    # Definitions nothing refers to are left out; then the runtime helpers this module calls,
    # and only those, are copied from rulelang.runtime.
    text, read, defined = link(text)
    imports, helpers = helpers_for(read, defined)
    # isort's order (the project's ruff config checks generated modules): plain imports, then
    # from-imports, each by module
    imports = sorted({*imports, "from fractions import Fraction",
                      "from random import Random as _Random"},
                     key=lambda line: (line.startswith("from "), line.split()[1]))
    text = text.replace(_IMPORTS_MARK, "\n".join(imports), 1)
    text = text.replace(_HELPERS_MARK, helpers.rstrip("\n"), 1)
    text = wrap_module(share_temporaries(text))
    return text + _line_map(text)


def _parse_table(program, low) -> tuple[str, list[str]]:
    """The text of _PARSE (pc of a decision -> {option name: (option number, the kind of each
    parameter: INDEX_<enum> for an enum member's name, True for a bool, None for an int or a
    player)}), which State.apply reads an action string with, and the enums it names. A name
    two options of a decision share (with its standing options) is left out: such a string is
    found among the listing's strings, as before."""
    flat = [opt for sd in program.standing for opt in sd.options]
    enums: list[str] = []

    def kinds(opt) -> str:
        out = []
        for prm in opt.params:
            t = T.strip(program.slot_types[program.slots[prm]])
            if t.kind == "enum":
                if t.name not in enums:
                    enums.append(t.name)
                out.append(f"INDEX_{ident(t.name)}")
            else:
                out.append("True" if t.kind == "bool" else "None")
        return _tuple_text(out) if out else "()"
    pauses = []
    for pc in low.pauses:
        ins = low.code[pc]
        if not isinstance(ins, ChooseAt):
            continue
        numbered = [(oi, opt) for oi, opt in enumerate(ins.node.options)]
        numbered += [(-1 - j, opt) for j, opt in enumerate(flat)]
        names = [opt.name for _oi, opt in numbered]
        entries = [f"{ident(opt.name)!r}: ({oi}, {kinds(opt)})" for oi, opt in numbered
                   if names.count(opt.name) == 1]
        pauses.append(f"{pc}: {{{', '.join(entries)}}}")
    return "{" + ", ".join(pauses) + "}", enums


def _line_map(text: str) -> str:
    """Generated line -> .rules line, from the `# rules:N` markers (carried down a function)."""
    out, cur = {}, 0
    for i, line in enumerate(text.splitlines(), start=1):
        if line.startswith(("def ", "class ")):
            cur = 0
        m = _MARK.search(line)
        if m:
            cur = int(m.group(1))
        if cur:
            out[i] = cur
    return "\n" + wrap_items("_LINEMAP = {", [f"{k}: {v}" for k, v in out.items()], "}") + "\n"


