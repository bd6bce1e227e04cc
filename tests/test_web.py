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
        assert lines[:3] == ["lobby (amount): 30 options; type a number to play that option",
                             "1: lobby(100)", "2: lobby(200)"]
        assert lines[-1] == "30: lobby(3000)" and len(lines) == 31
        # every error that points at help (whatever its wording in play.py) gets help here
        hinted = 0
        for answer in ("zzz", "lobby"):
            ws0.send_json({"answer": answer})
            hinted += _follow_hints(ws0, ws0.receive_json()["error"])
        assert hinted >= 1
        ws0.send_json({"answer": "2"})  # a number from the '? lobby' list plays that option
        ws0.receive_json()
        assert session.state.history[-1] == "lobby(200)"


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
    assert BAD_MESSAGE == 'a message must be a JSON object: {"answer": "TEXT"} or {"index": N}'
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
