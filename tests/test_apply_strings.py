"""A compiled engine's apply(action) reads the action string instead of listing every string.

State.apply finds the choice from the string's option name and arguments (the module's
_find_action) and falls back to the listing's strings only when that fails. It must pick exactly
the index the strings give, for every legal string of every decision met in random games of
every rules file and variant, and return -1 (not a wrong index) for every string that is not
the canonical spelling of a legal action.
"""

from __future__ import annotations

import glob
import os
import random
import sys

import pytest

import rulelang
from rulelang import IllegalAction
from tests.conftest import RULES


def _cases():
    out = []
    for path in sorted(glob.glob(os.path.join(RULES, "*.rules"))):
        game = rulelang.load(path)
        for variant in [None, *game.variants]:
            out.append(pytest.param(path, variant,
                                    id=f"{os.path.basename(path)}-{variant or 'base'}"))
    return out


def _spoilt(text: str) -> list[str]:
    """Spellings of an action string that are not the action string."""
    name, _, rest = text.partition("(")
    inner = rest[:-1]
    out = [text + " ", " " + text, text[:-1], name.upper() + "(" + rest, name + "_x(" + rest,
           name + "(" + inner + ", 0)", name + "(" + inner.replace(", ", ",") + ")"]
    if inner:
        first, _, more = inner.partition(", ")
        for bad in ("0" + first, "+" + first, first + " ", "--" + first, "true", "7.0", "",
                    first.lower() + "X"):
            out.append(name + "(" + ", ".join([bad, more] if more else [bad]) + ")")
    return [x for x in out if x != text]


@pytest.mark.parametrize("path,variant", _cases())
def test_an_action_string_is_read_to_the_index_its_listing_gives(path, variant):
    game = rulelang.load(path, variant=variant, backend="compiled")
    rng = random.Random(11)
    checked = 0
    for players in sorted({game.min_players, game.max_players}):
        s = game.new_game(num_players=players)
        module = sys.modules[type(s).__module__]
        while s.current_player != rulelang.TERMINAL:
            if s.current_player >= 0:
                names = s.legal_actions()
                # every string of a short listing, a sample of a long one (a thousand bids)
                ks = range(len(names)) if len(names) <= 60 else sorted(
                    {0, len(names) - 1, *rng.sample(range(len(names)), 40)})
                for k in ks:
                    assert module._find_action(s.pc, s._acts, names[k]) == k, names[k]
                    checked += 1
                    for bad in _spoilt(names[k]):
                        if bad not in names:
                            assert module._find_action(s.pc, s._acts, bad) == -1, bad
                k = rng.randrange(len(names))
                before = s.digest()
                t = s.clone()
                t.apply(names[k])
                s.apply_index(k)
                assert t.digest() == s.digest() != before
            else:
                s.apply_index(rng.randrange(s.num_choices()))
    assert checked > 100


def test_a_spelling_that_is_not_the_actions_is_refused_as_before():
    game = rulelang.load(os.path.join(RULES, "acquire.rules"), backend="compiled")
    s = game.new_game(num_players=3)
    while s.current_player < 0:
        s.apply_index(0)
    first = s.legal_actions()[0]
    before = s.digest()
    for bad in (first + " ", first.upper(), "pass_place(1)", 7, None):
        with pytest.raises(IllegalAction, match="is not legal here"):
            s.apply(bad)
    assert s.digest() == before
    s.apply(first)
    assert s.digest() != before
