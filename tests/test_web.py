"""The browser table: per-seat pages and socket messages never carry hidden state, answers are
applied for the right seat only, and a real headless Chromium plays whole games against bots."""

from __future__ import annotations

import html
import json
import random
import re
import shutil
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rulelang.play import Session
from rulelang.web import BAD_MESSAGE, WEB_HELP, create_app

ROOT = Path(__file__).resolve().parent.parent


def rules(name: str) -> str:
    return str(ROOT / "rules" / f"{name}.rules")


def _token(app, seat: int) -> str:
    return next(t for t, p in app.state.table.tokens.items() if p == seat)


def _has(text: str, word: str) -> bool:
    return re.search(rf"(?<![0-9A-Za-z_]){re.escape(word)}(?![0-9A-Za-z_])", text) is not None


def test_acquire_pages_and_messages_never_show_other_hands_or_the_bag():
    session = Session(rules("acquire"), ["human", "human", "random"], seed=11)
    app = create_app(session)
    tokens = {p: _token(app, p) for p in (0, 1)}
    rng = random.Random(2)
    checked = 0
    # one TestClient context: all requests and sockets share the app's event loop
    with TestClient(app) as client, client.websocket_connect(f"/ws/{tokens[0]}") as ws0, \
            client.websocket_connect(f"/ws/{tokens[1]}") as ws1:
        socks = {0: ws0, 1: ws1}
        last = {p: socks[p].receive_json() for p in (0, 1)}
        for _ in range(40):
            st = session.state
            if st.is_terminal():
                break
            hands = st.get_var("hand")
            bag = st.to_json()  # the full state, to know what is hidden right now
            hidden_bag = json.loads(bag)["vars"]["bag"]
            for p in (0, 1):
                other = hands[1 - p]
                page = client.get(f"/play/{tokens[p]}").text
                state = client.get(f"/state/{tokens[p]}").text
                for text in (json.dumps(last[p]), page, state):
                    leaks = [t for t in other + hidden_bag if _has(text, t)]
                    assert leaks == [], (p, leaks)
                    checked += 1
            mover = st.current_player
            legal = st.legal_actions()
            socks[mover].send_json({"index": rng.randrange(len(legal))})
            # every seat gets its own update after the move
            last = {p: socks[p].receive_json() for p in (0, 1)}
    assert checked >= 200


def test_pola_sealed_bid_stays_out_of_the_other_seats_messages():
    session = Session(rules("polanaftowe"), ["human", "human", "random"], seed=5)
    app = create_app(session)
    t0, t1 = _token(app, 0), _token(app, 1)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{t0}") as ws0, \
            client.websocket_connect(f"/ws/{t1}") as ws1:
        first = ws0.receive_json()
        ws1.receive_json()
        assert first["your_turn"] and first["menu"][0]["name"] == "lobby"
        ws0.send_json({"answer": "lobby 2500"})
        mine, theirs = ws0.receive_json(), ws1.receive_json()
        assert session.state.history[-1] == "lobby(2500)"
        assert "2500" in json.dumps(mine)  # P0 sees his own sealed bid
        assert "2500" not in json.dumps(theirs)
        assert "P0: ?" in theirs["log"]
        assert theirs["your_turn"] and not mine["your_turn"]
        # a seat cannot move for another
        ws0.send_json({"answer": "lobby 100"})
        assert ws0.receive_json() == {"error": "it is not your turn"}
        ws1.send_json({"index": [3]})
        assert ws1.receive_json() == {"error": "index must be a whole number"}
        ws1.send_json({"index": 10**6})
        assert ws1.receive_json() == {"error": "no action numbered 1000001"}


def test_seat_links():
    session = Session(rules("acquire"), ["human", "random", "human"], seed=1)
    app = create_app(session)
    client = TestClient(app)
    index = client.get("/").text
    assert 'href="/join/0"' in index and 'href="/join/2"' in index
    assert 'href="/join/1"' not in index  # a bot seat
    r = client.get("/join/2", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/play/{_token(app, 2)}"
    assert client.get("/join/2", follow_redirects=False).status_code == 409
    assert 'href="/join/2"' not in client.get("/").text
    assert client.get("/play/not-a-token").status_code == 404
    assert client.get("/state/not-a-token").status_code == 404


def _follow_hints(ws, error: str) -> int:
    """Send every "type ?..." an error suggests; each must be answered with help."""
    hints = re.findall(r"type (\?(?= )|'\?[^']*')", error)
    for hint in hints:
        ws.send_json({"answer": hint.strip("'")})
        assert "help" in ws.receive_json(), (error, hint)
    return len(hints)


def test_question_mark_shows_the_browser_help_and_the_options_of_one_action():
    session = Session(rules("polanaftowe"), ["human", "human", "random"], seed=5)
    app = create_app(session)
    t0, t1 = _token(app, 0), _token(app, 1)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{t0}") as ws0, \
            client.websocket_connect(f"/ws/{t1}") as ws1:
        ws0.receive_json()
        ws1.receive_json()
        for ask in ("?", " HELP "):
            ws0.send_json({"answer": ask})
            assert ws0.receive_json() == {"help": list(WEB_HELP)}
        assert WEB_HELP[2] == "?  this help (also the ? button)"
        ws1.send_json({"answer": "?"})  # help needs no turn
        assert ws1.receive_json() == {"help": list(WEB_HELP)}
        ws1.send_json({"answer": "? lobby"})
        assert ws1.receive_json() == {"error": "it is not your turn"}
        ws0.send_json({"answer": "? nosuch"})
        assert ws0.receive_json() == {"error": "no legal action named 'nosuch'"}
        ws0.send_json({"answer": "? lobby"})
        lines = ws0.receive_json()["help"]
        # as line mode lists them: a summarised group's options have no number
        assert lines[:3] == ["lobby (amount): 30 options; type one to play it (e.g. lobby 100)",
                             "lobby(100)", "lobby(200)"]
        assert lines[-1] == "lobby(3000)" and len(lines) == 31
        # every error that points at help (whatever its wording in play.py) gets help here
        hinted = 0
        for answer in ("zzz", "lobby"):
            ws0.send_json({"answer": answer})
            hinted += _follow_hints(ws0, ws0.receive_json()["error"])
        assert hinted >= 1
        ws0.send_json({"answer": "2"})  # not the second option, which has no number
        assert ws0.receive_json() == {
            "error": "'2' is not legal now: lobby takes 100..3000 step 100"}
        ws0.send_json({"answer": "200"})  # the amount, as the list shows it
        ws0.receive_json()
        assert session.state.history[-1] == "lobby(200)"


# ----------------------------------------------------------- typed answers, as in line mode


def test_a_bare_number_is_never_an_option_the_page_does_not_number():
    # Pola Naftowe's lobby is one summarised group, no button numbered: `5` bid a sealed
    # lobby(500) nobody could see (the fifth legal action); now line mode's message
    session = Session(rules("polanaftowe"), ["human", "human", "random"], seed=5)
    app = create_app(session)
    before = list(session.state.history)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{_token(app, 0)}") as ws:
        ws.receive_json()
        for answer in ("5", "30"):
            ws.send_json({"answer": answer})
            assert ws.receive_json() == {
                "error": f"'{answer}' is not legal now: lobby takes 100..3000 step 100"}
        assert session.state.history == before
        ws.send_json({"answer": "500"})  # the amount itself
        ws.receive_json()
        assert session.state.history[-1] == "lobby(500)"


def test_a_number_is_the_one_its_button_shows():
    # Power Grid, seed 1: P1 answers P0's bid of 34. The bids are one summarised group, so
    # pass_bid's button is numbered 1 (it was the 17th legal action, and `1` was bid(35))
    session = Session(rules("powergrid"), ["random", "human", "random"], seed=1)
    app = create_app(session)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{_token(app, 1)}") as ws:
        menu = ws.receive_json()["menu"]
        assert menu[1] == {"name": "pass_bid", "labels": [], "options": [[16, ""]],
                           "numbers": [1]}
        assert "numbers" not in menu[0] and menu[0]["summary"] == "35..50"
        ws.send_json({"answer": "6"})
        assert ws.receive_json() == {"error": "no action numbered 6 (only 1); bid takes 35..50"}
        ws.send_json({"answer": "? bid"})
        lines = ws.receive_json()["help"]
        assert lines[:2] == ["bid (amount): 16 options; type one to play it (e.g. bid 35)",
                             "bid(35)"]
        ws.send_json({"answer": "? pass_bid"})
        assert ws.receive_json()["help"] == [
            "pass_bid: 1 option; type a number to play that option", "1: pass_bid()"]
        assert session.state.history[-1] == "bid(34)"
        ws.send_json({"answer": "1"})
        ws.receive_json()
        assert session.state.history[session.state.history.index("bid(34)") + 1] == "pass_bid()"


# Pola Naftowe, seed 11, two greedy bots: after P0's lobby of 1200 wins, P0 names the player
# exempt from the event: `exempt_player (player)  1) P0   2) P1   3) P2`, `exempt_nobody  4)`
POLA_11 = dict(seed=11, params={"rounds": 2})


def test_a_player_is_shown_and_typed_by_his_seat_name():
    session = Session(rules("polanaftowe"), ["human", "greedy", "greedy"], **POLA_11)
    app = create_app(session)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{_token(app, 0)}") as ws:
        ws.receive_json()
        ws.send_json({"answer": "lobby 1200"})
        menu = ws.receive_json()["menu"]
        assert menu == [
            {"name": "exempt_player", "labels": ["player"],
             "options": [[0, "P0"], [1, "P1"], [2, "P2"]], "numbers": [1, 2, 3]},
            {"name": "exempt_nobody", "labels": [], "options": [[3, ""]], "numbers": [4]}]
        ws.send_json({"answer": "? exempt_player"})
        assert ws.receive_json()["help"][1:] == [
            "1: exempt_player(0) [P0]", "2: exempt_player(1) [P1]", "3: exempt_player(2) [P2]"]
        ws.send_json({"answer": "exempt_player P7"})
        assert ws.receive_json() == {
            "error": "'exempt_player P7' is not legal now: exempt_player takes P0, P1, P2"}
        ws.send_json({"answer": "exempt_player P0"})
        ws.receive_json()
        assert "exempt_player(0)" in session.state.history  # the engine's action string
        assert "P0 (you): exempt_player(P0)" in session.log_lines(0)


@pytest.mark.parametrize("answer, action", [
    ("p2", "exempt_player(2)"), ("exempt_player p1", "exempt_player(1)"),
    ("2", "exempt_player(1)"), ("4", "exempt_nobody()")])
def test_a_seat_name_or_a_button_number_plays_that_action(answer, action):
    session = Session(rules("polanaftowe"), ["human", "greedy", "greedy"], **POLA_11)
    app = create_app(session)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{_token(app, 0)}") as ws:
        ws.receive_json()
        ws.send_json({"answer": "lobby 1200"})
        ws.receive_json()
        at = len(session.state.history)
        ws.send_json({"answer": answer})
        assert "error" not in ws.receive_json()
        assert session.state.history[at] == action


# ---------------------------------------------------------------------------- undo and leave


def _state(session: Session) -> tuple:
    """The whole game as the session holds it: state JSON, digest, history, log, digests."""
    st = session.state
    return (st.to_json(), st.digest(), list(st.history), len(session.log),
            list(session.digests))


def test_undo_takes_back_the_move_and_the_bots_moves_after_it():
    # Power Grid, seed 0: P0 bids 40, the random bots bid 42 and 47, and it is P0's turn
    # again. Undo goes back to P0's decision before the bid, over the bots' bids, exactly.
    session = Session(rules("powergrid"), ["human", "random", "random"], seed=0)
    app = create_app(session)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{_token(app, 0)}") as ws:
        first = ws.receive_json()
        assert first["can_undo"] is False
        assert first["undo_refusal"] == "nothing to undo: you have not moved yet"
        ws.send_json({"undo": True})
        assert ws.receive_json() == {"error": "nothing to undo: you have not moved yet"}
        before = _state(session)
        ws.send_json({"answer": "bid 40"})
        moved = ws.receive_json()
        assert session.state.history[-3:] == ["bid(40)", "bid(42)", "bid(47)"]
        assert moved["your_turn"] and moved["can_undo"] is True
        assert moved["undo_refusal"] is None
        assert _state(session) != before
        ws.send_json({"undo": True})
        undone = ws.receive_json()
        assert _state(session) == before
        assert undone == first  # the page shows exactly what it showed before the bid
        assert client.get(f"/state/{_token(app, 0)}").json() == first
        # the bots answer the same bid the same way; typed 'undo' works as at the terminal
        ws.send_json({"answer": "bid 40"})
        assert ws.receive_json() == moved
        ws.send_json({"answer": " UNDO "})
        assert ws.receive_json() == first and _state(session) == before


def test_undo_goes_back_one_decision_at_a_time():
    # Acquire, seed 7: P0 places (the buy decision follows, nothing drawn), then buys.
    session = Session(rules("acquire"), ["human", "random", "random"], seed=7)
    app = create_app(session)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{_token(app, 0)}") as ws:
        first = ws.receive_json()
        start = _state(session)
        ws.send_json({"answer": "place 4d"})
        placed = ws.receive_json()
        after_place = _state(session)
        ws.send_json({"answer": "buy luxor"})
        bought = ws.receive_json()
        assert bought["can_undo"] is True and session.state.history[-1] == "buy(Luxor)"
        ws.send_json({"undo": True})
        assert ws.receive_json() == placed and _state(session) == after_place
        ws.send_json({"undo": True})
        assert ws.receive_json() == first and _state(session) == start


def test_undo_is_refused_after_a_chance_draw_with_the_sessions_reason():
    # Acquire, seed 7: P0 places, buys nothing and draws his next tile.
    session = Session(rules("acquire"), ["human", "random", "random"], seed=7)
    app = create_app(session)
    refusal = "cannot undo: there has been a chance draw since your move"
    with TestClient(app) as client, client.websocket_connect(f"/ws/{_token(app, 0)}") as ws:
        ws.receive_json()
        ws.send_json({"index": 0})
        assert ws.receive_json()["can_undo"] is True
        ws.send_json({"answer": "end_buy"})
        drawn = ws.receive_json()
        assert session.undo_refusal() == refusal
        assert drawn["can_undo"] is False and drawn["undo_refusal"] == refusal
        before = _state(session)
        ws.send_json({"undo": True})
        assert ws.receive_json() == {"error": refusal}
        ws.send_json({"answer": "undo"})
        assert ws.receive_json() == {"error": refusal}
        assert _state(session) == before
        assert client.get(f"/state/{_token(app, 0)}").json() == drawn


def test_undo_is_refused_between_two_people():
    session = Session(rules("polanaftowe"), ["human", "human", "random"], seed=5)
    app = create_app(session)
    t0, t1 = _token(app, 0), _token(app, 1)
    refusal = "undo is only possible against bots"
    with TestClient(app) as client, client.websocket_connect(f"/ws/{t0}") as ws0, \
            client.websocket_connect(f"/ws/{t1}") as ws1:
        for ws in (ws0, ws1):
            m = ws.receive_json()
            assert m["can_undo"] is False and m["undo_refusal"] == refusal
        ws0.send_json({"answer": "lobby 2500"})
        ws0.receive_json()
        assert ws1.receive_json()["undo_refusal"] == refusal
        before = _state(session)
        ws0.send_json({"undo": True})
        assert ws0.receive_json() == {"error": refusal}
        assert _state(session) == before
        for bad, error in (({"undo": 1}, "undo must be true"),
                           ({"leave": "yes"}, "leave must be true")):
            ws1.send_json(bad)
            assert ws1.receive_json() == {"error": error}
        assert _state(session) == before


def test_leaving_abandons_the_game_for_every_seat_and_writes_its_record(tmp_path):
    from click.testing import CliRunner

    from rulelang.cli import cli

    record = tmp_path / "game.json"
    session = Session(rules("polanaftowe"), ["human", "human", "random"], seed=5)
    app = create_app(session, record=str(record))
    t0, t1 = _token(app, 0), _token(app, 1)
    closed = "the game was abandoned: P1 left it"
    with TestClient(app) as client, client.websocket_connect(f"/ws/{t0}") as ws0, \
            client.websocket_connect(f"/ws/{t1}") as ws1:
        ws0.receive_json()
        ws1.receive_json()
        ws0.send_json({"answer": "lobby 2500"})
        ws0.receive_json()
        assert ws1.receive_json()["your_turn"]
        assert not record.exists()  # written when the game ends or is left, not before
        history = list(session.state.history)
        ws1.send_json({"leave": True})  # P1 leaves while it is his turn
        left0, left1 = ws0.receive_json(), ws1.receive_json()
        assert left0["abandoned"] == "P1 left the game"
        assert left1["abandoned"] == "P1 (you) left the game"
        for m in (left0, left1):
            assert m["status"] == "game abandoned" and m["over"] is False
            assert m["your_turn"] is False and m["menu"] == [] and m["result"] == []
            assert m["can_undo"] is False and m["undo_refusal"] == closed
        # the record of the game so far: an abandoned game, no scores and no winners
        rec = json.loads(record.read_text(encoding="utf-8"))
        assert rec["scores"] is None and rec["winners"] is None
        assert rec["actions"] == history == session.state.history
        assert rec["digests"] == session.digests
        assert rec["players"] == 3 and rec["seed"] == 5
        # afterwards the table stays up, as after the end of a game, and nobody can move
        for ws, message in ((ws1, {"answer": "lobby 100"}), (ws1, {"index": 0}),
                            (ws0, {"answer": "? lobby"}), (ws0, {"leave": True}),
                            (ws0, {"undo": True})):
            ws.send_json(message)
            assert ws.receive_json() == {"error": closed}
        assert session.state.history == history
        assert client.get(f"/state/{t1}").json() == left1
        assert "<p>game abandoned</p>" in client.get("/").text
    res = CliRunner().invoke(cli, ["replay", rules("polanaftowe"), str(record)])
    assert res.exit_code == 0, res.output
    assert "the record ends before the game is over" in res.output


def test_leaving_without_a_record_and_after_the_end(tmp_path):
    # Pola Naftowe, seed 7: P0 taking the first legal action each turn ends it in 7 moves.
    session = Session(rules("polanaftowe"), ["human", "random", "random"], seed=7)
    record = tmp_path / "game.json"
    app = create_app(session, record=str(record))
    with TestClient(app) as client, client.websocket_connect(f"/ws/{_token(app, 0)}") as ws:
        m = ws.receive_json()
        for _ in range(7):
            assert m["abandoned"] is None and not m["over"]
            assert not record.exists()
            ws.send_json({"index": 0})
            m = ws.receive_json()
        assert m["over"] and session.state.is_terminal()
        rec = json.loads(record.read_text(encoding="utf-8"))  # written at the end
        assert rec["actions"] == session.state.history
        assert rec["scores"] == list(session.state.scores())
        assert rec["winners"] == list(session.state.winners())
        ws.send_json({"leave": True})
        assert ws.receive_json() == {"error": "the game is over: there is nothing to leave"}
        assert json.loads(record.read_text(encoding="utf-8")) == rec
    # without a record path, leaving ends the game and writes nothing
    session = Session(rules("polanaftowe"), ["human", "random", "random"], seed=7)
    app = create_app(session)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{_token(app, 0)}") as ws:
        ws.receive_json()
        ws.send_json({"leave": True})
        assert ws.receive_json()["abandoned"] == "P0 (you) left the game"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.json"]


def test_help_names_undo_and_leave():
    assert any(line.startswith("undo ") and "u key" in line for line in WEB_HELP)
    assert any(line.startswith("leave ") and "confirm" in line for line in WEB_HELP)


NODE = shutil.which("node")

# A stand-in for the few DOM calls the page makes, to run its script in Node: elements with
# children, text, attributes and onclick; a socket that records what the page sends.
_NODE_DOM = """
(() => {
  class Node_ { constructor(tag) { this.tagName = tag.toUpperCase(); this.kids = [];
      this.own = ""; this.style = {}; this.dataset = {}; this.hidden = false;
      this.disabled = false; this.title = ""; this.value = ""; }
    get textContent() { return this.own + this.kids.map(k => k.textContent).join(""); }
    set textContent(v) { this.own = String(v); this.kids = []; }
    append(...xs) { for (const x of xs) this.kids.push(typeof x === "string"
                                                       ? {textContent: x} : x); }
    replaceChildren(...xs) { this.own = ""; this.kids = []; this.append(...xs); }
    focus() { document.activeElement = this; }
    click() { if (!this.disabled && this.onclick) this.onclick({}); } }
  const byId = {}, listeners = [];
  for (const [tag, id, flags] of STATIC) { const e = new Node_(tag); e.id = id;
    e.hidden = flags.includes("hidden"); e.disabled = flags.includes("disabled");
    byId[id] = e; }
  globalThis.window = globalThis;
  globalThis.document = { body: new Node_("body"), activeElement: null,
    getElementById: (id) => byId[id] || null,
    createElement: (tag) => new Node_(tag),
    createTextNode: (t) => ({textContent: t}),
    addEventListener: (type, f) => listeners.push([type, f]) };
  globalThis.location = {pathname: "/play/TOKEN", search: "", protocol: "http:", host: "h"};
  globalThis.SENT = [];
  globalThis.WebSocket = class { send(x) { SENT.push(JSON.parse(x)); } };
  globalThis.press = (key, target) => { let stopped = false;
    const e = {key, target: target || document.body, ctrlKey: false, metaKey: false,
               altKey: false, repeat: false, preventDefault() { stopped = true; }};
    for (const [type, f] of listeners) if (type === "keydown") f(e);
    return stopped; };
})();
"""

# What the test does with the page, and what it reports.
_NODE_SCENARIO = """
const show = (m) => ws.onmessage({data: JSON.stringify(m)});
const out = {};
const snap = () => ({undo_disabled: $("undo").disabled, undo_title: $("undo").title,
  leave_hidden: $("leave").hidden, confirm_hidden: $("leaveconfirm").hidden,
  result: $("result").textContent, error: $("error").textContent,
  over: document.body.dataset.over, sent: SENT.splice(0)});
out.initial = snap();
show(MESSAGES.first);
press("u");
out.first = snap();
show(MESSAGES.moved);
press("u", {tagName: "INPUT"});  // typing in a field: no undo
out.typing = snap();
press("u");
out.key = snap();
$("undo").click();
out.button = snap();
show({error: MESSAGES.refusal});
out.refused = snap();
$("leave").click();
out.asked = snap();
$("leaveno").click();
out.stayed = snap();
$("leave").click();
press("Escape");
out.escaped = snap();
$("leave").click();
$("leaveyes").click();
out.left = snap();
show(MESSAGES.abandoned);
out.abandoned = snap();
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_page_undo_button_key_and_leave_confirmation_in_node(tmp_path):
    session = Session(rules("powergrid"), ["human", "random", "random"], seed=0)
    app = create_app(session)
    token = _token(app, 0)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{token}") as ws:
        page = client.get(f"/play/{token}").text
        first = ws.receive_json()
        ws.send_json({"answer": "bid 40"})
        moved = ws.receive_json()
        ws.send_json({"leave": True})
        abandoned = ws.receive_json()
    body = page[page.index('<div id="layout">'):page.index("<script>")]
    static = [[tag, id_, re.findall(r"\b(hidden|disabled)\b", rest)]
              for tag, id_, rest in re.findall(r'<(\w+) [^>]*?id="(\w+)"([^>]*)>', body)]
    script = page[page.index("<script>") + len("<script>"):page.index("</script>")]
    messages = {"first": first, "moved": moved, "abandoned": abandoned,
                "refusal": "cannot undo: there has been a chance draw since your move"}
    source = (f"const STATIC = {json.dumps(static)};\n{_NODE_DOM}\n{script}\n"
              f"const MESSAGES = {json.dumps(messages)};\n{_NODE_SCENARIO}")
    (tmp_path / "page.js").write_text(source, encoding="utf-8")
    res = subprocess.run([NODE, str(tmp_path / "page.js")], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    # before any message the button is off; with nothing to undo it stays off and says why
    assert out["initial"]["undo_disabled"] is True
    assert out["first"] == {**out["first"], "undo_disabled": True, "sent": [],
                            "undo_title": "nothing to undo: you have not moved yet"}
    # after a move: u (not while typing in a field) and the button send an undo
    assert out["typing"]["undo_disabled"] is False and out["typing"]["sent"] == []
    assert out["typing"]["undo_title"] == "take back your last move (u)"
    assert out["key"]["sent"] == [{"undo": True}]
    assert out["button"]["sent"] == [{"undo": True}]
    # a refusal is shown where the page shows other refused input
    assert out["refused"]["error"] == messages["refusal"]
    # leave asks first on the page; stay, or Escape, send nothing; only the confirmation does
    assert out["asked"]["confirm_hidden"] is False and out["asked"]["sent"] == []
    assert out["stayed"]["confirm_hidden"] is True and out["stayed"]["sent"] == []
    assert out["escaped"]["confirm_hidden"] is True and out["escaped"]["sent"] == []
    assert out["left"]["sent"] == [{"leave": True}] and out["left"]["confirm_hidden"] is True
    # the abandoned game: said so, no leave button, no undo
    done = out["abandoned"]
    assert done["result"] == "Game abandoned: P0 (you) left the game."
    assert done["over"] == "abandoned" and done["leave_hidden"] is True
    assert done["undo_disabled"] is True
    assert done["undo_title"] == "the game was abandoned: P0 left it"


def _page_in_node(page: str, tmp_path: Path, prelude: str, scenario: str) -> dict:
    """Run the page's script in Node (the _NODE_DOM stand-in) after `prelude`, then
    `scenario`, which prints one JSON object: returned."""
    body = page[page.index('<div id="layout">'):page.index("<script>")]
    static = [[tag, id_, re.findall(r"\b(hidden|disabled)\b", rest)]
              for tag, id_, rest in re.findall(r'<(\w+) [^>]*?id="(\w+)"([^>]*)>', body)]
    script = page[page.index("<script>") + len("<script>"):page.index("</script>")]
    source = (f"const STATIC = {json.dumps(static)};\n{_NODE_DOM}\n{script}\n{prelude}\n"
              f"{scenario}")
    (tmp_path / "page.js").write_text(source, encoding="utf-8")
    res = subprocess.run([NODE, str(tmp_path / "page.js")], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


# The menu's buttons as the page draws them, and what clicking the second one sends.
_NODE_BUTTONS = """
ws.onmessage({data: JSON.stringify(MESSAGE)});
const buttons = $("menu").kids.flatMap(g => g.kids.filter(k => k.tagName === "BUTTON"));
buttons[1].onclick();
console.log(JSON.stringify({buttons: buttons.map(b => b.textContent),
  nums: buttons.map(b => b.kids[0].className), sent: SENT}));
"""


def test_the_buttons_show_line_modes_numbers(tmp_path):
    if NODE is None:
        pytest.skip("node is not installed")
    session = Session(rules("polanaftowe"), ["human", "greedy", "greedy"], **POLA_11)
    app = create_app(session)
    token = _token(app, 0)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{token}") as ws:
        page = client.get(f"/play/{token}").text
        ws.receive_json()
        ws.send_json({"answer": "lobby 1200"})
        message = ws.receive_json()
    out = _page_in_node(page, tmp_path, f"const MESSAGE = {json.dumps(message)};",
                        _NODE_BUTTONS)
    # as line mode: `exempt_player (player)  1) P0   2) P1   3) P2`, `exempt_nobody  4)`
    assert out["buttons"] == ["1) P0", "2) P1", "3) P2", "4) exempt_nobody"]
    assert out["nums"] == ["num"] * 4
    assert out["sent"] == [{"index": 1}]


# The first group of the menu as the page draws it: its text, and its spans.
_NODE_MENU = """
ws.onmessage({data: JSON.stringify(MESSAGE)});
const group = $("menu").kids[0];
console.log(JSON.stringify({text: group.textContent,
  spans: group.kids.filter(k => k.tagName === "SPAN").map(k => [k.className, k.title,
                                                                 k.textContent])}));
"""


def test_a_long_group_says_its_range_as_line_mode_does(tmp_path):
    session = Session(rules("polanaftowe"), ["human", "human", "random"], seed=5)
    app = create_app(session)
    token = _token(app, 0)
    with TestClient(app) as client, client.websocket_connect(f"/ws/{token}") as ws:
        page = client.get(f"/play/{token}").text
        first = ws.receive_json()
    # line mode: 'lobby (amount)  100..3000 step 100   (type e.g.: lobby 100)'
    assert first["menu"] == [{"name": "lobby", "labels": ["amount"], "count": 30,
                              "summary": "100..3000 step 100", "example": "100"}]
    # several parameters: line mode's first line, after the name
    auto = Session(rules("automobile"), ["human", "greedy", "greedy"], seed=5,
                   params={"turns": 2})
    auto_app = create_app(auto)
    with TestClient(auto_app) as client, \
            client.websocket_connect(f"/ws/{_token(auto_app, 0)}") as ws:
        ws.receive_json()
        ws.send_json({"index": 0})  # a character: then the models can be built
        long = {g["name"]: g for g in ws.receive_json()["menu"] if "count" in g}
    assert long == {"place_dealers": {
        "name": "place_dealers", "labels": ["luxury", "mid", "economy"], "count": 19,
        "summary": "19 choices: luxury 0..3; mid 0..3; economy 0..3", "example": "0 0 1"}}
    if NODE is None:
        pytest.skip("node is not installed")
    out = _page_in_node(page, tmp_path, f"const MESSAGE = {json.dumps(first)};", _NODE_MENU)
    assert out["text"] == "lobby (amount)100..3000 step 100 play"
    assert out["spans"] == [["name", "", "lobby (amount)"],
                            ["range", "30 choices", "100..3000 step 100 "]]


CHROMIUM = shutil.which("chromium")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _served(app):
    """Run app under uvicorn on a free port in a thread; yields the port; stops it after."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(100):
            if server.started:
                break
            time.sleep(0.05)
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_bad_socket_messages_are_answered_and_the_connection_kept():
    # over a real server: a bad message used to end the socket with no close frame (1006)
    from websockets.sync.client import connect

    session = Session(rules("polanaftowe"), ["human", "human", "random"], seed=5)
    app = create_app(session)
    assert BAD_MESSAGE == ('a message must be a JSON object: {"answer": "TEXT"}, {"index": N}, '
                           '{"undo": true} or {"leave": true}')
    with _served(app) as port, \
            connect(f"ws://127.0.0.1:{port}/ws/{_token(app, 0)}", open_timeout=10) as ws:
        def reply(message: str | bytes) -> dict:
            ws.send(message)
            return json.loads(ws.recv(timeout=10))

        json.loads(ws.recv(timeout=10))
        for bad in ("hello", "", "[1, 2]", '"lobby 100"', "null", "[" * 100_000,
                    b"\xff\xfe"):
            assert reply(bad) == {"error": BAD_MESSAGE}, bad
        assert "error" in reply(b'{"answer": "zzz"}')  # JSON as UTF-8 bytes reads like text
        assert reply('{"answer": 5}') == {"error": "answer must be text"}
        assert reply(json.dumps({"answer": "x" * 1001})) == {
            "error": "answer is too long (at most 1000 characters)"}
        # still connected: a good move is played
        assert reply('{"answer": "lobby 2500"}')["your_turn"] is False
        assert session.state.history[-1] == "lobby(2500)"


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                    "(apt-get install chromium)")
@pytest.mark.parametrize("name", ["acquire", "poder", "polanaftowe"])
def test_whole_game_in_headless_chromium(name, tmp_path):
    session = Session(rules(name), ["human", "random", "random"], seed=7)
    app = create_app(session)
    with _served(app) as port:
        url = f"http://127.0.0.1:{port}/play/{_token(app, 0)}"
        flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--no-first-run",
                 f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1000"]
        shot = tmp_path / f"{name}.png"
        # ?autoplay: the page plays its first listed action each turn; its load event waits
        # for the end of the game, so the screenshot shows the final table
        subprocess.run(flags + [f"--screenshot={shot}", url + "?autoplay=1"],
                       capture_output=True, timeout=300, check=True)
        assert session.state.is_terminal()
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        dom = subprocess.run(flags + ["--dump-dom", url + "?autoplay=1"], capture_output=True,
                             text=True,
                             timeout=120, check=True).stdout
        assert 'data-over="yes"' in dom
        assert "Game over. " in dom and "winners: P" in dom


# The real page, fed one real message through a stand-in WebSocket; after it has drawn the
# table, it scrolls to the bottom and writes where things are.
_FAKE_SOCKET = """<script>
window.WebSocket = class { set onmessage(f) { f({data: JSON.stringify(%s)}); } send(x) {} };
</script>"""
_MEASURE = """<script>
window.scrollTo(0, document.documentElement.scrollHeight);
const box = (e) => { const b = e.getBoundingClientRect(); return [b.top, b.bottom, b.width]; };
const pre = document.createElement("pre"); pre.id = "measure"; pre.hidden = true;
pre.textContent = JSON.stringify({width: innerWidth, height: innerHeight, scrollY: scrollY,
  page: document.documentElement.scrollHeight,
  boxes: ["#top", "#actions", "#menu button", "#answer"].map(
    q => box(document.querySelector(q))),
  cells: [...document.querySelectorAll("table.board td")].map(td => box(td)[2]),
  corner: [document.querySelector("table.board td").textContent,
           document.querySelector("table.board td").title]});
document.body.append(pre);
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                    "(apt-get install chromium)")
@pytest.mark.parametrize("width", [1280, 400])
def test_actions_stay_in_sight_below_a_long_view_in_headless_chromium(width, tmp_path):
    session = Session(rules("acquire"), ["human", "random", "random"], seed=7)
    app = create_app(session)
    token = _token(app, 0)
    with TestClient(app) as client:
        page = client.get(f"/play/{token}").text
        message = client.get(f"/state/{token}").json()
    items = message["view"]["items"]
    board = next(item for item in items if item["kind"] == "board")
    board["cells"][0][0] = "Continental"  # a long name in the first column
    message["view"]["items"] = items * 10  # a view far taller than the window, any game's
    page = page.replace("<body>", "<body>" + _FAKE_SOCKET % json.dumps(message), 1)
    page = page.replace("</body>", _MEASURE + "</body>")
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                          "--disable-background-networking", "--no-first-run",
                          f"--user-data-dir={tmp_path / 'profile'}",
                          f"--window-size={width},900", "--dump-dom",
                          (tmp_path / "page.html").as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    found = re.search(r'<pre id="measure"[^>]*>(.*?)</pre>', dom, re.DOTALL)
    assert found, dom[-2000:]
    m = json.loads(html.unescape(found.group(1)))
    assert m["page"] > 2600 and m["scrollY"] > 1000  # scrolled far down a long page
    if width == 400:
        assert m["width"] < 768  # the phone layout (headless windows are at least 500 wide)
    # who is to move, the actions, the first action's button and the typed answer: all in
    # the window
    for top, bottom, _ in m["boxes"]:
        assert 0 <= top < bottom <= m["height"], m
    # the board's cells are all of one width (to a pixel); a long name is shortened, in full
    # on hover
    assert max(m["cells"]) - min(m["cells"]) < 1, sorted(set(m["cells"]))
    assert m["corner"] == ["Con", "Continental"]


def test_serve_takes_a_record_path_and_refuses_one_it_cannot_write(tmp_path, monkeypatch):
    """`serve --record PATH` hands the path to the table (it writes the record when the game
    ends, is left, or the server stops); a path that cannot be written fails before serving."""
    from click.testing import CliRunner

    import rulelang.web
    from rulelang import exitcodes as X
    from rulelang.cli import cli

    served = {}
    monkeypatch.setattr(rulelang.web, "serve",
                        lambda session, host, port, record: served.update(record=record))
    path = tmp_path / "game.json"
    res = CliRunner().invoke(cli, ["serve", rules("polanaftowe"), "-p", "human,random,random",
                                   "--record", str(path)])
    assert res.exit_code == 0, res.output
    assert served == {"record": str(path)}
    res = CliRunner().invoke(cli, ["serve", rules("polanaftowe"), "-p", "human,random,random",
                                   "--record", str(tmp_path / "no" / "game.json")])
    assert res.exit_code == X.FAILURE and "cannot write the record" in res.output
