"""Browser table (the `web` extra): `rulelang serve FILE --players human,random,random`.

A small Starlette app serves one game. Each human seat has a secret link (`/play/TOKEN`); the
index page lets people take a free seat. The page talks to the server over a WebSocket: the
server sends each seat a message built only from that seat's observation (the view model, the
log as the seat may see it, its legal actions) after every move, and the page sends back the
chosen action. Bots move on the server as soon as it is their turn.
"""

from __future__ import annotations

import asyncio
import html
import json
import secrets
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from rulelang.play import LIST_LIMIT, InputError, Session, group_actions, resolve
from rulelang.viewmodel import seat_name


class WebTable:
    """One game served to browsers: the session, the seats' secret tokens and open sockets."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.tokens = {secrets.token_urlsafe(16): p for p in session.humans()}
        self.joined: set[int] = set()
        self.sockets: dict[int, set[WebSocket]] = {p: set() for p in session.humans()}
        self.lock = asyncio.Lock()
        self.acks: set[str] = set()  # autoplay pages that have shown the end of the game
        session.advance()

    def token_of(self, p: int) -> str:
        return next(t for t, q in self.tokens.items() if q == p)

    def message(self, p: int) -> dict[str, Any]:
        """Everything seat p's page shows; built from p's observation only."""
        s = self.session
        st = s.state
        mine = st.current_player == p and not st.is_terminal()
        msg: dict[str, Any] = {
            "game": s.game.name,
            "seat": p,
            "seat_name": seat_name(p),
            "status": s.status(p),
            "view": s.view(p),
            "log": s.log_lines(p)[-300:],
            "your_turn": mine,
            "menu": [],
            "over": st.is_terminal(),
            "result": s.result_lines() if st.is_terminal() else [],
        }
        if mine:
            legal = st.legal_actions()
            for g in group_actions(legal, s.labels, s.display):
                entry: dict[str, Any] = {"name": g.name, "labels": g.labels}
                if len(g.indexes) <= LIST_LIMIT:
                    entry["options"] = [[k, " ".join(a)] for k, a in zip(g.indexes, g.shown)]
                else:
                    entry["count"] = len(g.indexes)
                    entry["example"] = " ".join(g.args[0])
                msg["menu"].append(entry)
        return msg

    async def broadcast(self) -> None:
        for p, socks in self.sockets.items():
            for ws in list(socks):
                try:
                    await ws.send_json(self.message(p))
                except (RuntimeError, WebSocketDisconnect):
                    socks.discard(ws)

    async def answer(self, p: int, data: dict[str, Any]) -> str | None:
        """Apply seat p's answer; returns an error text, or None when it was played."""
        async with self.lock:
            st = self.session.state
            if st.is_terminal() or st.current_player != p:
                return "it is not your turn"
            legal = st.legal_actions()
            try:
                if "index" in data:
                    k = data["index"]
                    if type(k) is not int:
                        return "index must be a whole number"
                    if not 0 <= k < len(legal):
                        return f"no action numbered {k + 1}"
                else:
                    k = resolve(str(data.get("answer", "")), legal, self.session.aliases)
            except (InputError, ValueError, TypeError) as err:
                return str(err)
            self.session.play(p, k)
        await self.broadcast()
        return None


def create_app(session: Session) -> Starlette:
    table = WebTable(session)

    async def index(request: Request) -> Response:
        s = table.session
        rows = []
        for p, kind in enumerate(s.kinds):
            if kind != "human":
                rows.append(f"<li>{html.escape(s.seat_label(p))}: bot</li>")
            elif p in table.joined:
                rows.append(f"<li>{seat_name(p)}: taken</li>")
            else:
                rows.append(f'<li>{seat_name(p)}: <a href="/join/{p}">take this seat</a></li>')
        body = (f"<h1>{html.escape(s.game.name)}</h1><p>{html.escape(s.status(None))}</p>"
                f"<ul>{''.join(rows)}</ul>")
        return HTMLResponse(_PAGE_HEAD + body + "</body></html>")

    async def join(request: Request) -> Response:
        p = int(request.path_params["seat"])
        if p not in table.sockets or p in table.joined:
            return HTMLResponse(_PAGE_HEAD + "<p>That seat is not free.</p></body></html>",
                                status_code=409)
        table.joined.add(p)
        return RedirectResponse(f"/play/{table.token_of(p)}", status_code=303)

    def seat_of(request_or_ws) -> int | None:
        return table.tokens.get(request_or_ws.path_params["token"])

    async def page(request: Request) -> Response:
        p = seat_of(request)
        if p is None:
            return HTMLResponse(_PAGE_HEAD + "<p>Unknown seat link.</p></body></html>",
                                status_code=404)
        table.joined.add(p)
        extra = ""
        if "autoplay" in request.query_params:
            # Demo and test mode: the page plays its first listed action at each turn, and an
            # image that loads only once this page has shown the end of the game holds the
            # page's load event, so a headless browser's screenshot shows a whole game.
            nonce = secrets.token_urlsafe(8)
            extra = (f'<img src="/until-over/{nonce}" alt="" hidden>'
                     f'<script>window.pageNonce = "{nonce}";</script>')
        return HTMLResponse(_PAGE_HEAD + _PLAY_BODY.replace("</body>", extra + "</body>"))

    async def until_over(request: Request) -> Response:
        nonce = request.path_params["nonce"]
        for _ in range(6000):  # at most ten minutes
            if nonce in table.acks:
                break
            await asyncio.sleep(0.1)
        return Response(_PIXEL, media_type="image/gif")

    async def state(request: Request) -> Response:
        p = seat_of(request)
        if p is None:
            return JSONResponse({"error": "unknown seat link"}, status_code=404)
        return JSONResponse(table.message(p))

    async def socket(ws: WebSocket) -> None:
        p = seat_of(ws)
        if p is None:
            await ws.close(code=4404)
            return
        await ws.accept()
        table.sockets[p].add(ws)
        try:
            await ws.send_json(table.message(p))
            while True:
                data = await ws.receive_json()
                if isinstance(data, dict) and "shown_over" in data:
                    table.acks.add(str(data["shown_over"]))
                    continue
                error = await table.answer(p, data if isinstance(data, dict) else {})
                if error is not None:
                    await ws.send_json({"error": error})
        except (WebSocketDisconnect, json.JSONDecodeError):
            pass
        finally:
            table.sockets[p].discard(ws)

    app = Starlette(routes=[
        Route("/", index),
        Route("/join/{seat:int}", join),
        Route("/play/{token}", page),
        Route("/state/{token}", state),
        Route("/until-over/{nonce}", until_over),
        WebSocketRoute("/ws/{token}", socket),
    ])
    app.state.table = table
    return app


# A 1x1 transparent GIF.
_PIXEL = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000"
                       "010001000002024401003b")

_PAGE_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rulelang table</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font-family: system-ui, sans-serif; margin: 1rem; background: #f6f4ef; color: #222; }
#top { font-weight: 600; margin-bottom: .5rem; }
#layout { display: flex; gap: 1.5rem; align-items: flex-start; flex-wrap: wrap; }
#view { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; max-width: 62rem; }
#side { width: 26rem; }
table { border-collapse: collapse; background: #fff; }
caption { text-align: left; font-weight: 600; padding: .2rem 0; }
th, td { padding: .15rem .45rem; border: 1px solid #ddd; font-size: .9rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.board td { width: 2.6rem; height: 2rem; text-align: center; font-size: .75rem; padding: 0; }
table.board th { font-size: .75rem; color: #777; background: #f0ede6; }
table.board td.empty { color: #bbb; }
.show { margin: .2rem 0; } .show b { margin-right: .4rem; }
#log { height: 16rem; overflow-y: auto; background: #fff; border: 1px solid #ddd;
       font-size: .8rem; padding: .3rem; margin: 0; list-style: none; }
#menu { margin-top: .8rem; }
.group { margin: .3rem 0; } .group .name { font-weight: 600; margin-right: .4rem; }
button { margin: .1rem; padding: .2rem .5rem; cursor: pointer; }
#error { color: #b00; min-height: 1.2rem; }
#result { font-weight: 600; }
</style></head><body>
"""

_PLAY_BODY = """<div id="top">connecting...</div>
<div id="layout"><div id="view"></div>
<div id="side"><ul id="log"></ul>
<div id="menu"></div>
<form id="typed"><input id="answer" size="28" placeholder="type an action or its number">
<button>play</button></form><div id="error"></div><div id="result"></div></div></div>
<script>
const token = location.pathname.split("/").pop();
const autoplay = new URLSearchParams(location.search).has("autoplay");
const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") +
                         location.host + "/ws/" + token);
const el = (tag, attrs, text) => { const e = document.createElement(tag);
  Object.assign(e, attrs || {}); if (text !== undefined) e.textContent = text; return e; };
function colour(text) {  // a stable pastel per cell text, so chains and owners stand out
  let h = 0; for (const c of text) h = (h * 31 + c.charCodeAt(0)) % 360;
  return "hsl(" + h + ", 60%, 82%)"; }
function board(item) {
  const t = el("table", {className: "board"}); t.append(el("caption", {}, item.title));
  const head = el("tr"); head.append(el("th"));
  for (const c of item.cols) head.append(el("th", {}, c));
  t.append(head);
  item.rows.forEach((r, i) => { const tr = el("tr"); tr.append(el("th", {}, r));
    for (const cell of item.cells[i]) {
      const plain = cell === "" || cell === ".";
      const td = el("td", {className: plain ? "empty" : ""}, cell);
      if (!plain && cell.length > 1) td.style.background = colour(cell);
      tr.append(td); }
    t.append(tr); });
  return t; }
function table(item) {
  const t = el("table"); t.append(el("caption", {}, item.title));
  const head = el("tr"); for (const c of item.columns) head.append(el("th", {}, c));
  t.append(head);
  for (const row of item.rows) { const tr = el("tr");
    row.forEach((x, i) => tr.append(el("td", {className: i && /^-?\\d+$/.test(x) ? "num" : ""},
                                        x)));
    t.append(tr); }
  return t; }
function send(obj) {
  document.getElementById("error").textContent = ""; ws.send(JSON.stringify(obj)); }
function render(m) {
  document.getElementById("top").textContent = m.seat_name + " — " + m.status;
  const view = document.getElementById("view"); view.replaceChildren();
  const shows = el("div");
  for (const item of m.view.items) {
    if (item.kind === "board") view.append(board(item));
    else if (item.kind === "table") view.append(table(item));
    else { const d = el("div", {className: "show"}); d.append(el("b", {}, item.label + ":"));
           d.append(document.createTextNode(item.text)); shows.append(d); } }
  view.append(shows);
  const log = document.getElementById("log"); log.replaceChildren();
  for (const line of m.log) log.append(el("li", {}, line));
  log.scrollTop = log.scrollHeight;
  const menu = document.getElementById("menu"); menu.replaceChildren();
  for (const g of m.menu) {
    const d = el("div", {className: "group"});
    d.append(el("span", {className: "name"},
                g.name + (g.labels.length ? " (" + g.labels.join(", ") + ")" : "")));
    if (g.options) { for (const [k, args] of g.options)
        d.append(el("button", {onclick: () => send({index: k}), className: "act"},
                    args || g.name)); }
    else { const inp = el("input", {size: 10, placeholder: g.example});
      d.append(el("span", {}, g.count + " choices "), inp,
               el("button", {onclick: () => send({answer: g.name + " " + inp.value})}, "play")); }
    menu.append(d); }
  document.getElementById("typed").style.display = m.your_turn ? "" : "none";
  document.getElementById("result").textContent = m.over ? "Game over. " + m.result.join("; ") : "";
  document.body.dataset.over = m.over ? "yes" : "no";
  if (m.over && window.pageNonce) send({shown_over: window.pageNonce});
  if (autoplay && m.your_turn) {
    const first = m.menu.find(g => g.options && g.name !== "declare_end") || m.menu[0];
    setTimeout(() => send(first.options ? {index: first.options[0][0]}
                                        : {answer: first.name + " " + first.example}), 0); }
}
ws.onmessage = (e) => { const m = JSON.parse(e.data);
  if (m.error) document.getElementById("error").textContent = m.error; else render(m); };
ws.onclose = () => { document.getElementById("top").textContent += " (disconnected)"; };
document.getElementById("typed").onsubmit = (e) => { e.preventDefault();
  const a = document.getElementById("answer"); send({answer: a.value}); a.value = ""; };
</script></body></html>
"""


def serve(session: Session, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run the table with uvicorn until interrupted; prints each human seat's link."""
    import uvicorn

    app = create_app(session)
    table: WebTable = app.state.table
    print(f"{session.game.name}: http://{host}:{port}/ (take a free seat there)")
    for token, p in sorted(table.tokens.items(), key=lambda kv: kv[1]):
        print(f"  {seat_name(p)}: http://{host}:{port}/play/{token}")
    uvicorn.run(app, host=host, port=port, log_level="warning")
