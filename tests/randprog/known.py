"""Disagreements already known and written down as strict-xfail reproducers.

Each entry recognises one defect precisely, names its issue item and reproducer file under
tests/fixtures/randprog/. The random-program suite counts programs that hit a known defect but
does not fail on them; the reproducer's own test (test_randprog.py, xfail strict) fails as soon
as the defect is fixed, and the entry must then go.
"""

from __future__ import annotations

import json

from tests.randprog.run import Failure


def _snap(x):
    return x[0] if isinstance(x, tuple) else x


def _bool_local_as_int(f: Failure) -> bool:
    """Issue 7 item 16: a bool local held at a pause is `1`/`0` in the compiled state JSON."""
    if f.kind != "mismatch" or f.sig != "step:json" or not f.data:
        return False
    a, b = (json.loads(_snap(x)["json"]) for x in f.data)
    la, lb = a.pop("locals", {}), b.pop("locals", {})
    if a != b or la.keys() != lb.keys():
        return False
    diff = [k for k in la if (type(la[k]), la[k]) != (type(lb[k]), lb[k])]  # True == 1
    return bool(diff) and all(isinstance(la[k], bool) and type(lb[k]) is int
                              and int(la[k]) == lb[k] for k in diff)


def _len_of_enum_name(f: Failure) -> bool:
    """Issue 7 item 15: `len(E)` on an enum or grid name, or on a constant set, compiles to
    `63.bit_count()`."""
    return (f.kind == "crash" and f.sig.startswith("compiled:SyntaxError")
            and "invalid decimal literal" in f.detail)


def _none_into_int(f: Failure) -> bool:
    """Not in issue 7: a `none` reaching an int state variable or the score is stored (or
    scored) by the interpreter; the compiled engine raises "value is none"."""
    return (f.kind == "mismatch" and f.sig in ("new_game fault", "step:errors")
            and "compiled ('RulesRuntimeError', 'value is none'" in f.detail
            and "interpreter ('" not in f.detail)


# (defect, fixture file name, matcher)
KNOWN: list[tuple[str, str, object]] = [
    # Items 15 and 16 are fixed; their reproducers stay as regression tests, and the matchers
    # above stay to show, on the code before the fix, what the random programs found.
    # Also fixed: a none reaching an int state variable or the score (the interpreter now
    # none-checks state initial values and scores as the compiled engine does).
]


def known(f: Failure) -> str | None:
    """The issue item of a known defect this failure shows, or None."""
    for item, _fixture, match in KNOWN:
        if match(f):
            return item
    return None
