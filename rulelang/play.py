"""Playing a game with people: a session driver, the action menu, and the plain terminal table.

The session is shared by every front end (plain terminal, Textual, browser): it advances the
game through chance nodes, bot moves and forced moves up to the next human decision, and keeps
who made each move, so a log can name the seat. Everything a person is shown comes from that
person's observation (`State.observation(p)` / `history_for(p)`) and the view built from it.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rulelang import sim
from rulelang.view import arg_display, display_aliases, param_labels
from rulelang.viewmodel import Viewer, seat_name

CHANCE = sim.CHANCE
TERMINAL = sim.TERMINAL
# Groups with more options than this are summarised (a range or a count) instead of listed.
LIST_LIMIT = 12


# ---------------------------------------------------------------------------------- actions


def split_action(action: str) -> tuple[str, list[str]]:
    """'dispose(3, 4)' -> ('dispose', ['3', '4'])."""
    name, _, rest = action.partition("(")
    rest = rest[:-1] if rest.endswith(")") else rest
    return name, [a for a in rest.split(", ") if a != ""]


@dataclass
class Group:
    """The legal actions of one name, in legal-action order."""

    name: str
    labels: list[str]
    indexes: list[int] = field(default_factory=list)
    args: list[list[str]] = field(default_factory=list)
    # The arguments as people see them: enum members by their display names
    shown: list[list[str]] = field(default_factory=list)


def shown_args(name: str, args: list[str], display: dict[str, list[dict[str, str]]]
               ) -> list[str]:
    """An action's arguments with enum members by their display names (view.arg_display)."""
    per = display.get(name)
    if not per or len(per) != len(args):
        return list(args)
    return [d.get(a, a) for a, d in zip(args, per)]


def describe_action(action: str, labels: dict[str, list[str]],
                    display: dict[str, list[dict[str, str]]]) -> str:
    """An action string for people (the log, `replay --step`): enum members by their display
    names, parameters named (view labels) when there are several."""
    if action == "?" or "(" not in action:
        return action
    name, args = split_action(action)
    args = shown_args(name, args, display)
    names = labels.get(name)
    if len(args) < 2 or not names or len(names) != len(args):
        return f"{name}({', '.join(args)})"
    return f"{name}({', '.join(f'{lab}={a}' for lab, a in zip(names, args))})"


def group_actions(legal: list[str], labels: dict[str, list[str]],
                  display: dict[str, list[dict[str, str]]] | None = None) -> list[Group]:
    groups: dict[str, Group] = {}
    for k, a in enumerate(legal):
        name, args = split_action(a)
        g = groups.get(name)
        if g is None:
            g = groups[name] = Group(name, list(labels.get(name, [])) or [f"arg{i + 1}" for i in
                                                                          range(len(args))])
        g.indexes.append(k)
        g.args.append(args)
        g.shown.append(shown_args(name, args, display or {}))
    return list(groups.values())


def _int_runs(values: list[int]) -> str:
    """Ascending ints as compact runs: 1..10, 12, 20..100 step 10."""
    out, i = [], 0
    while i < len(values):
        j = i
        if i + 1 < len(values):
            step = values[i + 1] - values[i]
            while j + 1 < len(values) and values[j + 1] - values[j] == step:
                j += 1
            if j - i >= 2:
                out.append(f"{values[i]}..{values[j]}" + (f" step {step}" if step != 1 else ""))
                i = j + 1
                continue
        out.append(str(values[i]))
        i += 1
    return ", ".join(out)


def listed(g: Group) -> bool:
    """Whether the menu lists a group's options one by one (each with its number), rather
    than summarising them."""
    return not g.labels or len(g.indexes) <= LIST_LIMIT


def menu_numbers(groups: list[Group]) -> list[int]:
    """The legal actions a menu numbers, in the order of their numbers (1, 2, ...): the
    options of the groups it lists. A summarised group's options have no number: a number
    on screen is the only number a person can mean."""
    return [k for g in groups if listed(g) for k in g.indexes]


def describe_group(g: Group, width: int = 0, numbers: Mapping[int, int] | None = None
                   ) -> list[str]:
    """Menu lines for one group: each option with its number, or a summary when there are many.
    `numbers`: legal index -> the number the menu gives it (menu_numbers); by default its place
    in the legal actions."""
    head = (g.name + (f" ({', '.join(g.labels)})" if g.labels else "")).ljust(width)

    def number(k: int) -> int:
        return k + 1 if numbers is None else numbers[k]

    if not g.labels:
        return [f"  {head}  {number(g.indexes[0])})"]
    people = g.shown or g.args  # the arguments as people see them
    if listed(g):
        opts = "   ".join(f"{number(k)}) " + " ".join(a) for k, a in zip(g.indexes, people))
        return [f"  {head}  {opts}"]
    if len(g.labels) == 1 and all(_is_int(a[0]) for a in people):
        first = min(int(a[0]) for a in g.args)
        return [f"  {head}  {group_summary(g)}   (type e.g.: {g.name} {first})"]
    # as people see each argument (P1 for a player), where that is one word they can type
    example = " ".join(s if len(s.split()) == 1 else a for a, s in zip(g.args[0], people[0]))
    return [f"  {head}  {group_summary(g)}",
            f"  {''.ljust(width)}  (type e.g.: {g.name} {example}; '? {g.name}' lists them)"]


def group_summary(g: Group) -> str:
    """What a menu says of a group too long to list, after its name: the run of its one int
    argument (`100..3000 step 100`), or `20 choices: model Duryea, ...; factories 0..2`."""
    people = g.shown or g.args
    if len(g.labels) == 1 and all(_is_int(a[0]) for a in people):
        return _int_runs(sorted(int(a[0]) for a in g.args))
    cols = []
    for i, label in enumerate(g.labels):
        vals = []
        for a in people:
            if a[i] not in vals:
                vals.append(a[i])
        if all(_is_int(v) for v in vals):
            shown = _int_runs(sorted(int(v) for v in vals))
        else:
            shown = ", ".join(vals[:8]) + (", ..." if len(vals) > 8 else "")
        cols.append(f"{label} {shown}")
    return f"{len(g.indexes)} choices: {'; '.join(cols)}"


@dataclass
class Menu:
    """A pause's legal actions as every front end offers them (line mode, the full-screen table,
    the browser): grouped as the menu groups them, and the actions it numbers in the order of
    their numbers (menu_numbers). A typed number means what it shows (Session.resolve)."""

    legal: list[str]
    groups: list[Group]
    numbered: list[int]

    @property
    def numbers(self) -> dict[int, int]:
        """Legal index -> the number the menu gives it."""
        return {k: n for n, k in enumerate(self.numbered, 1)}


def _is_int(s: str) -> bool:
    return bool(re.fullmatch(r"-?\d+", s))


def menu_lines(legal: list[str], labels: dict[str, list[str]],
               display: dict[str, list[dict[str, str]]] | None = None) -> list[str]:
    """The menu: each group of actions on its line, the options it lists numbered 1, 2, ...
    in the order shown (menu_numbers)."""
    groups = group_actions(legal, labels, display)
    numbers = {k: n for n, k in enumerate(menu_numbers(groups), 1)}
    width = max((len(g.name + (f" ({', '.join(g.labels)})" if g.labels else ""))
                 for g in groups), default=0)
    lines = []
    for g in groups:
        lines.extend(describe_group(g, width, numbers))
    return lines


class _UndoPoint(NamedTuple):
    """What `undo` restores: the state before a human's move, the lengths of the log and the
    digests then, the chance and random-seat draws' generator and each bot's, and the history
    entries the human could not see then (a reveal since refuses the undo)."""

    state: Any
    log_len: int
    digests_len: int
    rng: Any
    hidden: frozenset[int]
    bot_rngs: dict[int, Any]


class InputError(ValueError):
    """An answer that names no legal action (the message says why)."""


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[\s(),]+", text.strip().lower()) if t]


class _Legal(NamedTuple):
    """A legal action as resolve reads it: its name and arguments in lower case, and the
    arguments as people see them (a player as P1)."""

    name: str
    args: list[str]
    shown: list[str]


def _fits(typed: list[str], args: list[str], shown: list[str]) -> bool:
    """Whether typed arguments are these, each as its name or as people see it."""
    return len(typed) == len(args) and all(t in (a, s.lower())
                                           for t, a, s in zip(typed, args, shown))


def _unpadded(text: str) -> str:
    """`text` without the leading zeros of its numbers ('p04' -> 'p4')."""
    return re.sub(r"(?<!\d)0+(?=\d)", "", text)


def _unpad_tokens(toks: list[str], parsed: list[_Legal]) -> list[str]:
    """Typed words that are no legal argument, each replaced by the one legal argument it is
    without leading zeros ('p4' for the plant P04); a word that could be several stays."""
    values = {v.lower() for e in parsed for v in (*e.args, *e.shown)}
    out = []
    for t in toks:
        if t not in values and not any(e.name.startswith(t) for e in parsed):
            same = {v for v in values if _unpadded(v) == _unpadded(t)}
            t = same.pop() if len(same) == 1 else t
        out.append(t)
    return out


def resolve(answer: str, legal: list[str],
            aliases: Mapping[str, tuple[str, ...]] | None = None, *,
            numbered: list[int] | None = None,
            display: dict[str, list[dict[str, str]]] | None = None) -> int:
    """Index in `legal` of the action a person typed: a number, the exact action string, or a
    looser form ('place 4D', 'PLACE(4D)', 'dispose 2 4', '4D', 'bid(23)') that matches exactly
    one. `aliases` (view.display_aliases) lets a member be typed by its display name, or by
    the part of it before ': ' ('green' for "green: Netherlands north/east"); a name several
    members share means the one the legal actions name. A number without its leading zeros
    names the one argument it can be ('p4' for P04).

    `numbered`: the legal actions the menu numbers, in the order of their numbers
    (menu_numbers); a typed number is only ever one of those. None: every action, by its
    place in `legal`. `display` (view.arg_display): the arguments as people see them, which
    may be typed too (a player as P1), and which messages use; a bare number is an argument
    only where people see that number."""
    typed = answer.strip()
    if not typed:
        raise InputError("empty answer")
    text = _unalias(typed, legal, aliases) if aliases else typed
    parsed = []
    for a in legal:
        name, args = split_action(a)
        parsed.append(_Legal(name.lower(), [x.lower() for x in args],
                             shown_args(name, args, display or {})))

    def say(k: int) -> str:  # an action as people see it
        return describe_action(legal[k], {}, display or {})

    if re.fullmatch(r"[0-9]+", typed):
        # ASCII digits only (str.isdigit also takes '²'); a long number is simply out of range.
        # A number is an action's number in the menu, or the one argument of an action that
        # people see as that number ('30' for bid(30)): when it could be both, the answer is
        # refused rather than guessed.
        order = list(range(len(legal))) if numbered is None else numbered
        n = int(typed) if len(typed) <= 9 else 0
        k = order[n - 1] if 1 <= n <= len(order) else None
        by_arg = _arg_matches([_Legal(e.name, [x.lower() for x in e.shown], e.shown)
                               for e in parsed], [typed])
        if k is not None:
            if by_arg and by_arg != [k]:
                readings = [f"{say(k)} (number {n} in the menu)"] + [say(j) for j in by_arg]
                raise InputError(f"'{typed}' could be {', '.join(readings[:-1])} or "
                                 f"{readings[-1]}: type the action's name too")
            return k
        if len(by_arg) == 1:
            return by_arg[0]
        if by_arg:
            raise InputError(f"'{typed}' matches several actions: "
                             f"{', '.join(say(j) for j in by_arg[:6])}")
        # what the number can mean instead: the amounts of the groups the menu summarises
        takes = []
        for name in dict.fromkeys(e.name for e in parsed):
            same = [(j, e) for j, e in enumerate(parsed) if e.name == name]
            if len(same) > LIST_LIMIT:
                took = _takes(split_action(legal[same[0][0]])[0], [e for _j, e in same])
                takes += [took] if took is not None else []
        shown = typed if len(typed) <= 12 else typed[:12] + "..."
        if not order:
            raise InputError(f"'{shown}' is not legal now" + (
                f": {'; '.join(takes)}" if takes else "; type ? for help"))
        raise InputError(f"no action numbered {shown} "
                         f"({'only 1' if len(order) == 1 else f'1-{len(order)}'})"
                         + "".join(f"; {t}" for t in takes))
    if text in legal:
        return legal.index(text)
    toks = _unpad_tokens(_tokens(text), parsed)
    if not toks:  # only brackets and commas
        raise InputError(f"'{typed}' is not legal now; type ? for help")
    names = sorted({e.name for e in parsed})
    matches: list[int] = []
    name_hits = [n for n in names if n == toks[0]] or [n for n in names if n.startswith(toks[0])]
    if len(name_hits) == 1:
        name, args = name_hits[0], toks[1:]
        matches = [k for k, e in enumerate(parsed) if e.name == name and (
            _fits(args, e.args, e.shown) or (
                not args and len([1 for e2 in parsed if e2.name == name]) == 1))]
        if not matches and args:
            matches = _arg_matches(parsed, args, name)
        if not matches and not args:
            count = sum(1 for e in parsed if e.name == name)
            raise InputError(f"{name} needs its parameters ({count} choices); "
                             f"type '? {name}' to list them")
        if not matches:
            raise InputError(_not_legal(typed, name, args, [
                (k, e) for k, e in enumerate(parsed) if e.name == name], say))
    elif len(name_hits) > 1:
        raise InputError(f"'{toks[0]}' could be {', '.join(name_hits)}")
    if not matches and not name_hits:
        matches = _arg_matches(parsed, toks)
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        shown = ", ".join(say(k) for k in matches[:6])
        raise InputError(f"'{typed}' matches several actions: {shown}")
    raise InputError(f"'{typed}' is not legal now; type ? for help")


def _unalias(text: str, legal: list[str], aliases: Mapping[str, tuple[str, ...]]) -> str:
    """`text` with each display name in it (longest first) replaced by the member it names:
    of the members it can mean, the one that is an argument of a legal action (or the only
    one). A display name that names several legal members is refused."""
    named = {x.lower() for a in legal for x in split_action(a)[1]}
    for shown, names in sorted(aliases.items(), key=lambda kv: (-len(kv[0]), kv[0])):
        pattern = re.compile(r"(?<![\w])" + re.escape(shown) + r"(?![\w])", re.IGNORECASE)
        if shown in named or not pattern.search(text):  # (a legal member's own name)
            continue
        live = [n for n in names if n.lower() in named]
        if len(live) > 1:
            raise InputError(f"'{shown}' could be {', '.join(live)}: type the name")
        if live or len(names) == 1:
            text = pattern.sub((live or list(names))[0], text)
    return text


def _arg_matches(parsed: list[_Legal], args: list[str], name: str | None = None) -> list[int]:
    """The legal actions (of `name`, or of any name) whose arguments are `args`, or whose
    varying arguments are: parameters that every legal action of a name shares may be left
    out (with one plant up for auction, `bid 23` is `bid(P13, 23)`)."""
    out: list[int] = []
    for nm in sorted({e.name for e in parsed}) if name is None else [name]:
        group = [(k, e) for k, e in enumerate(parsed) if e.name == nm]
        exact = [k for k, e in group if _fits(args, e.args, e.shown)]
        if exact or not args:
            out += exact
            continue
        free = _free(e for _k, e in group)
        if len(args) == len(free) < len(group[0][1].args):
            out += [k for k, e in group if _fits(args, [e.args[i] for i in free],
                                                  [e.shown[i] for i in free])]
    return sorted(out)


def _free(same) -> list[int]:
    """The positions of the arguments that vary among legal actions of one name."""
    same = list(same)
    return [i for i in range(len(same[0].args)) if len({e.args[i] for e in same}) > 1]


def _takes(name: str, same: list[_Legal]) -> str | None:
    """What the one parameter that varies among the legal actions of a name takes, as people
    see it ('bid takes 3..50', 'exempt_player takes P0, P2'), or None (none or several vary,
    or too many values to list)."""
    free = _free(same)
    if len(free) != 1:
        return None
    values = list(dict.fromkeys(e.shown[free[0]] for e in same))
    if all(_is_int(v) for v in values):
        return f"{name} takes {_int_runs(sorted(int(v) for v in values))}"
    if len(values) <= LIST_LIMIT:
        return f"{name} takes {', '.join(values)}"
    return None


def _not_legal(text: str, name: str, args: list[str], same: list[tuple[int, _Legal]],
               say: Callable[[int], str]) -> str:
    """Why `text` (read as `name args`) names no legal action of that name (`same`: the legal
    ones, with their indexes; `say`: an action as people see it): too few arguments for
    several of them, or which values the one that varies takes."""
    typed = f"'{text}'"
    begin = [k for k, e in same if len(args) < len(e.args)
             and _fits(args, e.args[:len(args)], e.shown[:len(args)])]
    if begin:
        shown = ", ".join(say(k) for k in begin[:6]) + (", ..." if len(begin) > 6 else "")
        return f"{typed} could be {shown}: give every parameter"
    # the one parameter that varies (with one plant up, bid(P13, 23) varies in its amount)
    first = same[0][1]
    free = _free(e for _k, e in same)
    fixed_ok = len(args) == 1 or (len(args) == len(first.args) and all(
        args[i] in (first.args[i], first.shown[i].lower()) for i in range(len(first.args))
        if i not in free))
    took = _takes(name, [e for _k, e in same]) if fixed_ok else None
    if took is not None:
        return f"{typed} is not legal now: {took}"
    return f"{typed} is not legal now; type '? {name}' to list its choices"


# ---------------------------------------------------------------------------------- session


@dataclass
class LogEntry:
    index: int  # position in the history
    actor: int  # seat, or CHANCE
    forced: bool = False
    # with a single human seat: the entry was "?" to that person when it was made
    hidden: bool = False


class Session:
    """One game being played: seats (human or a bot kind), the engine state, the RNG that
    draws chance outcomes and bot moves, and who made each move."""

    def __init__(self, path: str, kinds: list[str], *, seed: int | None = None,
                 variant: str | None = None, params: dict | None = None,
                 backend: str = "compiled", auto_forced: bool = True,
                 loader: Callable[..., Any] | None = None,
                 limits: dict | None = None) -> None:
        import rulelang

        self.path = path
        self.kinds = list(kinds)
        self.variant = variant
        self.params = dict(params or {})
        self.backend = backend
        self.seed = random.SystemRandom().randrange(2**32) if seed is None else seed
        self.rng = random.Random(self.seed)
        if loader is not None:
            # Tests drive the table with a stand-in engine; a file the checker refuses then
            # gets the raw view.
            more = {"limits": limits} if limits else {}
            self.game = loader(path, variant=variant, params=self.params, backend=backend,
                               **more)
            try:
                self.program = rulelang.check_file(path, variant=variant, params=self.params,
                                                   limits=limits)
            except rulelang.RulesError:
                self.program = None
        else:
            # limits (rulelang.Limits fields): the guards against runaway rules, -L in the CLI
            self.program = rulelang.check_file(path, variant=variant, params=self.params,
                                               limits=limits)
            if backend == "interpreter":
                from rulelang.interpreter import Game

                self.game = Game(self.program)
            elif backend == "compiled":
                from rulelang.codegen import load_compiled

                self.game = load_compiled(self.program)
            else:
                raise ValueError(f"unknown backend {backend!r} (interpreter or compiled)")
        from rulelang import bots

        # Seats other than human and random are the workbench's bots (greedy, mcts, ...).
        self.bots = {p: bots.make_bot(k, self.game, p, sim.bot_seed(self.seed, p))
                     for p, k in enumerate(self.kinds) if k not in ("human", "random")}
        self.viewer = Viewer(self.program) if self.program is not None else None
        self.labels = param_labels(self.program) if self.program is not None else {}
        self.display = arg_display(self.program) if self.program is not None else {}
        self.aliases = display_aliases(self.program) if self.program is not None else {}
        self.auto_forced = auto_forced
        self.state = self.game.new_game(num_players=len(kinds))
        self.log: list[LogEntry] = []
        self.digests: list[str] = []
        self.undo_stack: list[_UndoPoint] = []

    # -- seats
    def humans(self) -> list[int]:
        return [p for p, k in enumerate(self.kinds) if k == "human"]

    def seat_label(self, p: int, viewer: int | None = None) -> str:
        if p == CHANCE:
            return "chance"
        name = seat_name(p, viewer)
        if self.kinds[p] != "human":
            name += f" ({self.kinds[p]})"
        return name

    # -- moves
    def _apply(self, k: int, forced: bool = False) -> None:
        actor = self.state.current_player
        # apply() with the string, not apply_index: after a rules fault the state is the one
        # before the faulty action on every back end, so the record written stays replayable.
        if actor == CHANCE:
            self.state.apply(self.state.chance_outcomes()[k][0])
        else:
            self.state.apply(self.state.legal_actions()[k])
        index = len(self.state.history) - 1
        humans = self.humans()
        hidden = (len(humans) == 1 and hasattr(self.state, "history_for")
                  and self.state.history_for(humans[0])[index] == "?")
        self.log.append(LogEntry(index, actor, forced, hidden))
        self.digests.append(self.state.digest())

    def advance(self) -> None:
        """Play chance, bots and (if enabled) forced human moves up to a human decision."""
        while not self.state.is_terminal():
            p = self.state.current_player
            if p == CHANCE:
                self._apply(sim.pick_chance(self.rng, self.state))
            elif p in self.bots:
                bot = self.bots[p]
                # a user policy that raises is named with its own frames (sim.PolicyError)
                self._apply(sim.policy_choice(bot, self.state) if bot.kind == "policy"
                            else bot.choose(self.state))
            elif self.kinds[p] != "human":
                self._apply(sim.pick_random_action(self.rng, self.state, self.game.end_actions))
            elif self.auto_forced and self.state.num_choices() == 1:
                self._apply(0, forced=True)
            else:
                return

    def play(self, p: int, k: int) -> None:
        """Human seat p takes legal action k; then the game advances to the next human."""
        if self.state.current_player != p:
            raise ValueError(f"it is not {seat_name(p)}'s turn")
        self.undo_stack.append(_UndoPoint(
            self.state.clone(), len(self.log), len(self.digests), self.rng.getstate(),
            self._hidden_from(p), {q: bot.rng.getstate() for q, bot in self.bots.items()}))
        self._apply(k)
        self.advance()

    def _hidden_from(self, p: int) -> frozenset[int]:
        """The history entries p sees as "?" now."""
        if not hasattr(self.state, "history_for"):
            return frozenset()
        return frozenset(i for i, h in enumerate(self.state.history_for(p)) if h == "?")

    def undo_refusal(self) -> str | None:
        """Why the last move cannot be taken back now, or None when it can. Undo is offered
        only with a single human seat (in hot-seat play it would let a player take back a move
        another person has seen), and not past anything the move let its player learn that
        the same move played again would not change: a chance draw (his next tile, the dice),
        another seat's secret move, or a reveal of secret moves made before it (sealed bids).
        Taking back the move would show what comes next and let him choose again knowing it:
        the draws and the bots' moves are replayed the same way."""
        humans = self.humans()
        if len(humans) != 1:
            return "undo is only possible against bots"
        if not self.undo_stack:
            return "nothing to undo: you have not moved yet"
        point = self.undo_stack[-1]
        nlog = point.log_len
        if point.hidden - self._hidden_from(humans[0]):
            return "cannot undo: secret moves have been revealed since your move"
        for e in self.log[nlog + 1:]:
            if e.actor == CHANCE:
                return "cannot undo: there has been a chance draw since your move"
            if e.hidden:
                return (f"cannot undo: {self.seat_label(e.actor)} has made a secret move "
                        "since yours")
        return None

    def can_undo(self) -> bool:
        return self.undo_refusal() is None

    def undo(self) -> None:
        point = self.undo_stack.pop()
        self.state = point.state
        del self.log[point.log_len:]
        del self.digests[point.digests_len:]
        self.rng.setstate(point.rng)
        # the bots' own random numbers too: the same move played again gets the same answers
        # (undoing until a bot answers a move differently would be a way to cheat)
        for q, bot_rng in point.bot_rngs.items():
            self.bots[q].rng.setstate(bot_rng)

    # -- what a seat sees
    def observation(self, p: int) -> dict:
        return self.state.observation(p)

    def view(self, p: int | None) -> dict:
        """View model for seat p (None: the full state, for spectators and replays)."""
        if p is None:
            obj = json.loads(self.state.to_json())
            obj["player"] = None
        else:
            obj = self.state.observation(p)
        if self.viewer is None:
            return raw_model(obj, p)
        return self.viewer.model(obj, p)

    def log_lines(self, viewer: int | None, start: int = 0, compact: bool = True) -> list[str]:
        """Log entries from `start` on, as `viewer` may see them (None: everything). Compact
        logs put a run of moves by one seat (or of chance outcomes) on one line."""
        hist = self.state.history
        if viewer is not None and hasattr(self.state, "history_for"):
            hist = self.state.history_for(viewer)
        out: list[str] = []
        run_actor: int | None = None
        run: list[str] = []

        def flush() -> None:
            if run_actor is None:
                return
            shown = [t for t in run if t != "?"]
            hidden = len(run) - len(shown)
            if hidden:
                shown.append(f"{hidden} hidden" if run_actor == CHANCE
                             else "?" if hidden == 1 else f"{hidden} secret moves")
            out.append(f"{self.seat_label(run_actor, viewer)}: {', '.join(shown)}")

        for e in self.log[start:]:
            text = self.describe(hist[e.index]) + ("  (only legal move)" if e.forced else "")
            if not compact:
                out.append(f"{self.seat_label(e.actor, viewer)}: {text}")
                continue
            if e.actor != run_actor:
                flush()
                run_actor, run = e.actor, []
            run.append(text)
        if compact:
            flush()
        return out

    def secret_entries(self, viewer: int, start: int = 0) -> set[int]:
        """The log entries from `start` on that `viewer` sees as "?"."""
        hist = self.state.history_for(viewer) if hasattr(self.state, "history_for") else []
        return {j for j in range(start, len(self.log)) if hist and hist[self.log[j].index] == "?"}

    def revealed_lines(self, viewer: int, secrets: set[int]) -> list[str]:
        """The log entries in `secrets` (positions in the log, shown to `viewer` as "?") that
        a reveal has made visible since, as one line per seat ("revealed: P1 (greedy):
        bid(953)"); they are taken out of `secrets`."""
        if not secrets or not hasattr(self.state, "history_for"):
            return []
        hist = self.state.history_for(viewer)
        now = sorted(j for j in secrets if j < len(self.log) and hist[self.log[j].index] != "?")
        secrets.difference_update(now)
        by_actor: dict[int, list[str]] = {}
        for j in now:
            e = self.log[j]
            by_actor.setdefault(e.actor, []).append(self.describe(hist[e.index]))
        return [f"revealed: {self.seat_label(a, viewer)}: {', '.join(texts)}"
                for a, texts in by_actor.items()]

    def describe(self, action: str) -> str:
        return describe_action(action, self.labels, self.display)

    def menu(self) -> Menu:
        """The menu of the pause the game is at."""
        legal = self.state.legal_actions()
        groups = group_actions(legal, self.labels, self.display)
        return Menu(legal, groups, menu_numbers(groups))

    def resolve(self, answer: str, menu: Menu) -> int:
        """The legal index a person's answer names at `menu` (play.resolve, with this game's
        display names and the numbers the menu shows); raises InputError."""
        return resolve(answer, menu.legal, self.aliases, numbered=menu.numbered,
                       display=self.display)

    def record(self, file: str | None = None) -> dict:
        return sim.make_record(self.game, self.state, self.seed, self.digests,
                               file=file or self.path, variant=self.variant, params=self.params)

    @classmethod
    def resume(cls, path: str, record: dict, kinds: list[str], **kw) -> Session:
        """A session continued from a game record (the record's variant and params)."""
        s = cls(path, kinds, variant=record.get("variant"), params=record.get("params") or {},
                **kw)
        for a in record["actions"]:
            actor = s.state.current_player
            s.state.apply(a)
            s.log.append(LogEntry(len(s.state.history) - 1, actor))
            s.digests.append(s.state.digest())
        return s

    def status(self, viewer: int | None) -> str:
        st = self.state
        if st.is_terminal():
            return "game over"
        p = st.current_player
        who = "chance" if p == CHANCE else self.seat_label(p, viewer)
        phase = getattr(st, "phase", None) or "-"
        return f"{self.game.name} · phase {phase} · to move: {who}"

    def result_lines(self) -> list[str]:
        scores, winners = self.state.scores(), self.state.winners()
        lines = [f"{self.seat_label(p)}: {s}" + ("  winner" if p in winners else "")
                 for p, s in enumerate(scores)]
        lines.append(f"winners: {', '.join(seat_name(w) for w in winners) or 'none'}")
        return lines


# ---------------------------------------------------------------------------------- rendering


def raw_model(obs: dict, seat: int | None) -> dict:
    """A view model that lists an observation's variables as they are (no checked program)."""
    items = [{"kind": "show", "label": k, "text": json.dumps(v, separators=(",", ":"))}
             for k, v in sorted(obs.get("vars", {}).items())]
    return {"game": obs.get("game"), "seat": seat, "num_players": obs.get("num_players"),
            "phase": obs.get("phase"), "current_player": obs.get("current_player"),
            "items": items}


def abbreviate(text: str, width: int = 3) -> str:
    return text if len(text) <= width else text[:width]


def rich_view(model: dict, board_width: int = 3) -> list[Any]:
    """Rich renderables for a view model: boards and tables side by side where they fit."""
    from rich import box
    from rich.columns import Columns
    from rich.table import Table
    from rich.text import Text

    blocks: list[Any] = []
    shows: list[Any] = []
    for item in model["items"]:
        if item["kind"] == "board":
            t = Table(title=item["title"], box=box.SIMPLE_HEAD, padding=(0, 0),
                      show_edge=False, title_justify="left")
            t.add_column("", justify="right", style="dim")
            for c in item["cols"]:
                t.add_column(c, justify="center", min_width=board_width)
            for r, row in zip(item["rows"], item["cells"]):
                t.add_row(r, *(abbreviate(x, board_width) for x in row))
            blocks.append(t)
        elif item["kind"] == "table":
            t = Table(title=item["title"], box=box.SIMPLE_HEAD, padding=(0, 1),
                      show_edge=False, title_justify="left")
            for i, c in enumerate(item["columns"]):
                t.add_column(c, justify="left" if i == 0 else "right")
            for row in item["rows"]:
                t.add_row(*row)
            blocks.append(t)
        else:
            line = Text()
            line.append(f"{item['label']}: ", style="bold")
            line.append(item["text"])
            shows.append(line)
    out: list[Any] = []
    if blocks:
        out.append(Columns(blocks, padding=(0, 3)))
    out.extend(shows)
    return out


def text_view(model: dict, width: int = 100) -> str:
    """The view as plain text (for replays, tests and pipes)."""
    from rich.console import Console

    console = Console(width=width, record=True, file=_Null(), color_system=None,
                      highlight=False)
    for r in rich_view(model):
        console.print(r)
    return console.export_text()


class _Null:
    def write(self, s: str) -> int:
        return len(s)

    def flush(self) -> None:
        pass


# ---------------------------------------------------------------------------------- plain mode


class EndOfInput(Exception):
    """Standard input ended (or too many invalid answers) while a person had to decide."""


# Invalid answers in a row that end a game whose answers come from a pipe or a script (`yes 0 |
# rulelang play ...` would loop for ever); a person at a terminal has no limit.
MAX_INVALID = 10


HELP = """\
Answer with the number of an action, the action itself (place(5C)), or a looser form that
matches one action: 'place 5c', 'PLACE 5C', 'dispose 2 4', or just the argument ('5c').
  ?          this help and the full list of actions
  ? NAME     every option of one action (e.g. '? bid')
  log        the whole game log as you may see it
  undo       take back your last move (only against bots)
  q          leave the game (the record is still written with --record)"""


def plain_game(session: Session, console, read: Callable[[str], str],
               max_invalid: int | None = MAX_INVALID,
               clear: Callable[[], None] | None = None, err_console=None,
               record: str | None = None) -> bool:
    """Run a game in line mode. Returns True when the game ended, False if a person quit.
    Raises EndOfInput when input ends or after `max_invalid` invalid answers in a row (None:
    no limit, for a person at a terminal). `record`: where the caller writes the game record
    (`--record`), which a person who quits is told."""
    from rich.rule import Rule
    from rich.text import Text

    humans = session.humans()
    hot_seat = len(humans) > 1
    spectator = None if not humans else humans[0]
    seen = {p: 0 for p in humans}  # per human: log entries already shown
    secrets: dict[int, set[int]] = {p: set() for p in humans}  # of those, shown as "?"
    last_human: int | None = None
    session.advance()
    if not humans:
        for line in session.log_lines(None):
            console.print(Text(line, style="dim"))
    while not session.state.is_terminal():
        p = session.state.current_player
        if hot_seat and last_human is not None and last_human != p:
            if clear is not None:
                clear()
            console.print(Rule(f"hand over to {seat_name(p)}"))
            console.print(Text("Nothing of the previous player's turn is shown. "
                               f"{seat_name(p)}: press Enter when you are ready."))
            if read("") is None:
                raise EndOfInput("end of input")
            if clear is not None:
                clear()
        last_human = p
        new = session.revealed_lines(p, secrets[p]) + session.log_lines(p, seen[p])
        secrets[p] |= session.secret_entries(p, seen[p])
        seen[p] = len(session.log)
        console.print(Rule(session.status(p)))
        for line in new[-30:]:
            console.print(Text(line, style="dim"))
        if len(new) > 30:
            console.print(Text(f"({len(new) - 30} earlier entries: type 'log')", style="dim"))
        for r in rich_view(session.view(p)):
            console.print(r)
        menu = session.menu()
        legal, groups, numbers = menu.legal, menu.groups, menu.numbers
        console.print(Text(f"Your move, {seat_name(p)}:", style="bold"))
        for line in menu_lines(legal, session.labels, session.display):
            console.print(Text(line))
        invalid = 0
        while True:
            answer = read(f"{seat_name(p)}> ")
            if answer is None:
                raise EndOfInput("end of input while waiting for "
                                 f"{seat_name(p)}'s move")
            answer = answer.strip()
            low = answer.lower()
            if low in ("q", "quit", "exit"):
                if record is not None:
                    console.print(Text(f"the record of the game so far is written to {record}"))
                return False
            if low in ("?", "help"):
                console.print(Text(HELP))
                for line in menu_lines(legal, session.labels, session.display):
                    console.print(Text(line))
                continue
            if low.startswith("? ") or low.startswith("help "):
                want = low.split(None, 1)[1]
                named = [g for g in groups if g.name == want]
                if not named:
                    console.print(Text(f"no legal action named {want!r}"))
                for g in named:
                    # with the numbers of the menu; a summarised group's options have none
                    console.print(Text("  ".join(
                        (f"{numbers[k]}: " if k in numbers else "") + legal[k]
                        + (f" [{' '.join(s)}]" if s != a else "")
                        for k, a, s in zip(g.indexes, g.args, g.shown))))
                continue
            if low == "log":
                for line in session.log_lines(p):
                    console.print(Text(line, style="dim"))
                continue
            if low == "undo":
                refusal = session.undo_refusal()
                if refusal is None:
                    session.undo()
                    seen[p] = min(seen[p], len(session.log))
                    secrets[p] = {j for j in secrets[p] if j < len(session.log)}
                    console.print(Text("undone"))
                    break
                console.print(Text(refusal))
                continue
            try:
                k = session.resolve(answer, menu)
            except ValueError as err:
                invalid += 1
                (err_console or console).print(Text(f"{err}", style="red"))
                if max_invalid is not None and invalid >= max_invalid:
                    raise EndOfInput(f"{invalid} invalid answers in a row") from None
                continue
            session.play(p, k)
            break
    if len(humans) == 1:
        for line in (session.revealed_lines(spectator, secrets[spectator])
                     + session.log_lines(spectator, seen[spectator])):
            console.print(Text(line, style="dim"))
    elif hot_seat and clear is not None:
        clear()  # nobody's own view stays on screen, only the result
    console.print(Rule("game over"))
    if len(humans) == 1:
        for r in rich_view(session.view(spectator)):
            console.print(r)
    elif not humans:
        for r in rich_view(session.view(None)):
            console.print(r)
    for line in session.result_lines():
        console.print(Text(line))
    return True


# ---------------------------------------------------------------------------------- replay


class Stepper:
    """`rulelang replay --step`: each action of a record and the view after it, as one seat
    saw it or (seat None) with the full state."""

    def __init__(self, path: str, record: dict, seat: int | None, console,
                 from_step: int = 0, interactive: bool = False,
                 read: Callable[[str], str | None] | None = None) -> None:
        import rulelang

        program = rulelang.check_file(path, variant=record.get("variant"),
                                      params=record.get("params") or {})
        self.viewer = Viewer(program)
        self.labels = param_labels(program)
        self.display = arg_display(program)
        self.seat = seat
        self.console = console
        self.from_step = from_step
        self.interactive = interactive
        self.read = read or _input_or_none
        self.stopped = False
        self.hidden: dict[int, int] = {}  # steps shown to the seat as "?": their actors

    def show(self, i: int, actor: int, state) -> None:
        from rich.rule import Rule
        from rich.text import Text

        if self.stopped:
            return
        hist = state.history if self.seat is None else state.history_for(self.seat)
        revealed = sorted(j for j in self.hidden if hist[j] != "?")
        if hist[i] == "?":
            self.hidden[i] = actor
        if i < self.from_step:
            for j in revealed:
                del self.hidden[j]
            return
        who = "chance" if actor == CHANCE else seat_name(actor, self.seat)
        self.console.print(Rule(f"step {i}: {who}: "
                                f"{describe_action(hist[i], self.labels, self.display)}"))
        for j in revealed:  # a reveal at this step: what those steps were
            a = self.hidden.pop(j)
            self.console.print(Text(
                f"revealed: step {j}: {'chance' if a == CHANCE else seat_name(a, self.seat)}: "
                f"{describe_action(hist[j], self.labels, self.display)}"))
        if self.seat is None:
            obj = json.loads(state.to_json())
            obj["player"] = None
            model = self.viewer.model(obj, None)
        else:
            model = self.viewer.model(state.observation(self.seat), self.seat)
        for r in rich_view(model):
            self.console.print(r)
        if self.interactive:
            answer = self.read("Enter: next step, q: stop showing ")
            if answer is None or answer.strip().lower() == "q":
                self.stopped = True
                self.console.print(Text("(checking the rest without showing it)"))


def _input_or_none(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None
