"""The browser table: per-seat pages and socket messages never carry hidden state, answers are
applied for the right seat only, and a real headless Chromium plays whole games against bots."""

from __future__ import annotations

import json
import random
import re
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from rulelang.play import Session
from rulelang.web import create_app

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


CHROMIUM = shutil.which("chromium")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                    "(apt-get install chromium)")
@pytest.mark.parametrize("name", ["acquire", "poder", "polanaftowe"])
def test_whole_game_in_headless_chromium(name, tmp_path):
    import uvicorn

    session = Session(rules(name), ["human", "random", "random"], seed=7)
    app = create_app(session)
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
    finally:
        server.should_exit = True
        thread.join(timeout=10)
