"""Browser table (the `web` extra): `rulelang serve FILE --players human,random,random`.

A small Starlette app serves one game. Each human seat has a secret link (`/play/TOKEN`); the
index page lets people take a free seat. The page talks to the server over a WebSocket: the
server sends each seat a message built only from that seat's observation (the view model, the
log as the seat may see it, its legal actions) after every move, and the page sends back the
chosen action. Bots move on the server as soon as it is their turn.

The page can also take back a move (`{"undo": true}`: the session's undo, refused with the same
messages as at the terminal) and leave the game (`{"leave": true}`: the game is abandoned for
every seat, as `q` abandons it at the terminal; with a record path the record is written, its
scores and winners null). After that, like after the end of the game, the server goes on
serving the final table and refuses moves.
"""

from __future__ import annotations

import asyncio
import html
import json
import secrets
import sys
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from rulelang.play import InputError, Session, group_summary, listed
from rulelang.viewmodel import seat_name

# What '?' shows in the browser: how to enter actions on this page (docs/play.md, Browser).
WEB_HELP = (
    "Click an action's button to play it. A long group (bid 1..1000) has its own field: "
    "type the value there (250) and press its play button.",
    "Or type any action in the box and press Enter: its number on its button (3), the action "
    "itself (place(5C)), or a looser form that matches one action: 'place 5c', 'PLACE 5C', "
    "'dispose 2 4', 'bid 250', 'exempt_player P0', or just the argument ('5c'). Display names "
    "work too. A number is only ever one a button shows, or an amount ('250'): a long group's "
    "options have no number.",
    "?  this help (also the ? button)",
    "? NAME  every option of one action (e.g. '? bid'), with its number if it has one; type "
    "the number, or the option, to play it",
    "undo  take back your last move, and the bots' moves after it (also the undo button, or "
    "the u key when you are not typing in a field). Only against bots, and not past a chance "
    "draw, another player's secret move or a reveal since your move: the button is then "
    "greyed out and says why.",
    "leave  end the game for every seat (the leave button, then confirm). The game is "
    "abandoned: it has no winner, and nobody can move any more.",
)

# The reply to a socket message that is not a JSON object.
BAD_MESSAGE = ('a message must be a JSON object: {"answer": "TEXT"}, {"index": N}, '
               '{"undo": true} or {"leave": true}')

MAX_ANSWER = 1000  # characters of a typed answer


class WebTable:
    """One game served to browsers: the session, the seats' secret tokens and open sockets.
    With `record` (a path), the game record is written there when the game ends or is left."""

    def __init__(self, session: Session, record: str | None = None) -> None:
        self.session = session
        self.record = record
        self.left: int | None = None  # the seat that left the game (abandoned it)
        self.tokens = {secrets.token_urlsafe(16): p for p in session.humans()}
        self.joined: set[int] = set()
        self.sockets: dict[int, set[WebSocket]] = {p: set() for p in session.humans()}
        self.lock = asyncio.Lock()
        self.acks: set[str] = set()  # autoplay pages that have shown the end of the game
        session.advance()
        if session.state.is_terminal():
            self.write_record()

    def token_of(self, p: int) -> str:
        return next(t for t, q in self.tokens.items() if q == p)

    def status(self, viewer: int | None) -> str:
        return "game abandoned" if self.left is not None else self.session.status(viewer)

    def abandoned(self, viewer: int | None) -> str | None:
        """Who left the game, as `viewer` is told it; None while nobody has."""
        if self.left is None:
            return None
        return f"{seat_name(self.left, viewer)} left the game"

    def closed(self) -> str | None:
        """Why nobody can move any more (the game was left), or None."""
        if self.left is None:
            return None
        return f"the game was abandoned: {seat_name(self.left)} left it"

    def undo_refusal(self) -> str | None:
        """Why undo is refused now (Session.undo_refusal, as at the terminal and in the full
        screen table), or None when it is possible."""
        return self.closed() or self.session.undo_refusal()

    def write_record(self) -> str | None:
        """Write the game record (if a path was given); an error text, or None."""
        if self.record is None:
            return None
        try:
            Path(self.record).write_text(json.dumps(self.session.record()) + "\n",
                                         encoding="utf-8")
        except OSError as exc:
            return f"cannot write the record {self.record}: {exc.strerror or exc}"
        return None

    def message(self, p: int) -> dict[str, Any]:
        """Everything seat p's page shows; built from p's observation only."""
        s = self.session
        st = s.state
        mine = st.current_player == p and not st.is_terminal() and self.left is None
        refusal = self.undo_refusal()
        msg: dict[str, Any] = {
            "game": s.game.name,
            "seat": p,
            "seat_name": seat_name(p),
            "status": self.status(p),
            "view": s.view(p),
            "log": s.log_lines(p)[-300:],
            "your_turn": mine,
            "menu": [],
            "over": st.is_terminal(),
            "result": s.result_lines() if st.is_terminal() else [],
            # who left the game (it is then abandoned: no result, no more moves), or None
            "abandoned": self.abandoned(p),
            # whether the undo button works, and if not why (its title)
            "can_undo": refusal is None,
            "undo_refusal": refusal,
        }
        if mine:
            menu = s.menu()
            numbers = menu.numbers
            for g in menu.groups:
                entry: dict[str, Any] = {"name": g.name, "labels": g.labels}
                if listed(g):
                    entry["options"] = [[k, " ".join(a)] for k, a in zip(g.indexes, g.shown)]
                    # each option's number, on its button: line mode's menu numbers
                    entry["numbers"] = [numbers[k] for k in g.indexes]
                else:
                    entry["count"] = len(g.indexes)
                    entry["summary"] = group_summary(g)  # as line mode: 100..3000 step 100
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

    def help(self, p: int, text: str) -> dict[str, Any]:
        """The answer to '?' (how to enter actions here) or '? NAME' (every option of one
        legal action, with the number its button shows, if it has one: as line mode's `? NAME`),
        as a help or an error message."""
        words = text.split(None, 1)
        if len(words) == 1:
            return {"help": list(WEB_HELP)}
        want = words[1].strip().lower()
        st = self.session.state
        closed = self.closed()
        if closed is not None:
            return {"error": closed}
        if st.is_terminal() or st.current_player != p:
            return {"error": "it is not your turn"}
        menu = self.session.menu()
        legal, numbers = menu.legal, menu.numbers
        groups = [g for g in menu.groups if g.name.lower() == want]
        if not groups:
            return {"error": f"no legal action named {want!r}"}
        lines = []
        for g in groups:
            named = g.name + (f" ({', '.join(g.labels)})" if g.labels else "")
            count = len(g.indexes)
            typed = ("type a number to play that option" if g.indexes[0] in numbers
                     else f"type one to play it (e.g. {g.name} {' '.join(g.args[0])})")
            lines.append(f"{named}: {count} option{'s' if count != 1 else ''}; {typed}")
            lines.extend((f"{numbers[k]}: " if k in numbers else "") + legal[k]
                         + (f" [{' '.join(sh)}]" if sh != a else "")
                         for k, a, sh in zip(g.indexes, g.args, g.shown))
        return {"help": lines}

    async def answer(self, p: int, data: dict[str, Any]) -> str | None:
        """Apply seat p's answer; returns an error text, or None when it was played."""
        async with self.lock:
            st = self.session.state
            closed = self.closed()
            if closed is not None:
                return closed
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
                    answer = data.get("answer", "")
                    if not isinstance(answer, str):
                        return "answer must be text"
                    if len(answer) > MAX_ANSWER:
                        return f"answer is too long (at most {MAX_ANSWER} characters)"
                    # read as line mode reads it: a number is one a button shows
                    k = self.session.resolve(answer, self.session.menu())
            except (InputError, ValueError, TypeError) as err:
                return str(err)
            self.session.play(p, k)
            error = self.write_record() if self.session.state.is_terminal() else None
        await self.broadcast()
        return error

    async def undo(self, p: int) -> str | None:
        """Take back seat p's last move with the bots' moves after it, back to p's previous
        decision (Session.undo, as `undo` at the terminal and ctrl+z in the full screen
        table); returns the refusal, or None when it was undone."""
        async with self.lock:
            refusal = self.undo_refusal()
            if refusal is not None:
                return refusal
            self.session.undo()
        await self.broadcast()
        return None

    async def leave(self, p: int) -> str | None:
        """Seat p leaves: the game is abandoned for every seat, as `q` abandons it at the
        terminal, and its record written (scores and winners null). Returns an error text, or
        None."""
        async with self.lock:
            closed = self.closed()
            if closed is not None:
                return closed
            if self.session.state.is_terminal():
                return "the game is over: there is nothing to leave"
            self.left = p
            error = self.write_record()
        await self.broadcast()
        return error


def _decode(message: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON object a socket message carries (text, or UTF-8 bytes), or None."""
    raw = message.get("text")
    if raw is None:
        try:
            raw = (message.get("bytes") or b"").decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _flag(data: dict[str, Any], key: str) -> str | None:
    """None when `data[key]` is true (the one value an undo or leave message takes), else the
    error to answer with."""
    return None if data[key] is True else f"{key} must be true"


def _is_help(answer: str) -> bool:
    words = answer.strip().lower().split(None, 1)
    return bool(words) and words[0] in ("?", "help")


def create_app(session: Session, record: str | None = None) -> Starlette:
    """The browser table of `session`; with `record` (a path) the game record is written there
    when the game ends or is left."""
    table = WebTable(session, record)

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
        body = (f"<h1>{html.escape(s.game.name)}</h1>"
                f"<p>{html.escape(table.status(None))}</p>"
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
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = _decode(message)
                if data is None:
                    # a bad message is answered, not fatal: the page (or a script) can go on
                    await ws.send_json({"error": BAD_MESSAGE})
                    continue
                if "shown_over" in data:
                    table.acks.add(str(data["shown_over"]))
                    continue
                ask = data.get("answer")
                if isinstance(ask, str) and _is_help(ask):
                    await ws.send_json(table.help(p, ask.strip()))
                    continue
                if "leave" in data:
                    error = _flag(data, "leave") or await table.leave(p)
                elif "undo" in data:
                    error = _flag(data, "undo") or await table.undo(p)
                elif isinstance(ask, str) and ask.strip().lower() == "undo":
                    error = await table.undo(p)  # typed, as at the terminal
                else:
                    error = await table.answer(p, data)
                if error is not None:
                    await ws.send_json({"error": error})
        except WebSocketDisconnect:
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
body { font-family: system-ui, sans-serif; margin: 0; padding: 0 1rem; background: #f6f4ef;
       color: #222; }
h1 { margin-top: 1rem; }
#top { font-weight: 600; padding: .5rem 0; display: flex; flex-wrap: wrap; gap: .5rem;
       align-items: baseline; }
#top #status { flex: 1; }
/* Leaving asks first, on a line of its own under who is to move. */
#leaveconfirm { flex-basis: 100%; font-weight: normal; background: #fff3cd;
                border: 1px solid #e0c36a; padding: .3rem .5rem; }
/* Wide windows: the view on the left scrolls with the page; the side panel (who is to move,
   the actions, the log) stays in sight, however long the view is. */
#layout { display: grid; grid-template-columns: minmax(0, 1fr) minmax(18rem, 26rem);
          gap: 1.5rem; align-items: start; }
#view { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; min-width: 0;
        padding: 1rem 0; }
#side { position: sticky; top: 0; height: 100vh; box-sizing: border-box; padding-bottom: .5rem;
        display: flex; flex-direction: column; gap: .5rem; }
#actions { flex: 0 1 auto; min-height: 3rem; overflow-y: auto; }
#log { flex: 1 1 8rem; min-height: 5rem; overflow-y: auto; background: #fff;
       border: 1px solid #ddd; font-size: .8rem; padding: .3rem; margin: 0; list-style: none; }
table { border-collapse: collapse; background: #fff; }
caption { text-align: left; font-weight: 600; padding: .2rem 0; }
th, td { padding: .15rem .45rem; border: 1px solid #ddd; font-size: .9rem; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.board { table-layout: fixed; }
table.board td { width: 2.6rem; height: 2rem; text-align: center; font-size: .75rem; padding: 0;
                 overflow: hidden; white-space: nowrap; }
table.board th { font-size: .75rem; color: #777; background: #f0ede6; padding: 0 .2rem;
                 overflow: hidden; white-space: nowrap; }
table.board td.empty { color: #bbb; }
.show { margin: .2rem 0; } .show b { margin-right: .4rem; }
.group { margin: .3rem 0; } .group .name { font-weight: 600; margin-right: .4rem; }
button .num { color: #777; font-size: .8rem; }
button { margin: .1rem; padding: .2rem .5rem; cursor: pointer; }
#typed { display: flex; gap: .3rem; margin-top: .3rem; }
#typed input { flex: 1; min-width: 0; }
#error { color: #b00; min-height: 1.2rem; }
#help { background: #fff; border: 1px solid #ddd; padding: .3rem .5rem; font-size: .85rem;
        max-height: 40vh; overflow-y: auto; }
#help div { margin: .15rem 0; }
#result { font-weight: 600; }
/* Narrow windows (phones): one column; who is to move stays at the top and the actions at
   the bottom of the window, the view and the log scroll between them. */
@media (max-width: 48rem) {
  body { padding: 0 .5rem; }
  #layout { display: flex; flex-direction: column; align-items: stretch; gap: .5rem; }
  #side { display: contents; }
  #top { order: 0; position: sticky; top: 0; z-index: 1; background: #f6f4ef;
         border-bottom: 1px solid #ddd; }
  #view { order: 1; padding: 0; overflow-x: auto; }
  #log { order: 2; flex: none; height: 12rem; }
  #actions { order: 3; position: sticky; bottom: 0; z-index: 1; max-height: 45vh;
             background: #f6f4ef; border-top: 1px solid #ccc; padding: .3rem 0 .5rem; }
}
</style></head><body>
"""

_PLAY_BODY = """<div id="layout"><main id="view"></main>
<aside id="side"><div id="top"><span id="status">connecting...</span>
<button type="button" id="undo" disabled>undo</button>
<button type="button" id="leave" title="leave the game (it ends for every seat)">leave</button>
<button type="button" id="helpbtn" title="how to enter actions">?</button>
<div id="leaveconfirm" role="alertdialog" hidden>Leave the game? It ends for every seat, with
no winner. <button type="button" id="leaveyes">leave the game</button>
<button type="button" id="leaveno">stay</button></div></div>
<div id="actions"><div id="menu"></div>
<form id="typed"><input id="answer" placeholder="type an action, or ? for help"
autocomplete="off"><button>play</button></form>
<div id="error" role="alert"></div><div id="help" hidden></div><div id="result"></div></div>
<ul id="log"></ul></aside></div>
<script>
const token = location.pathname.split("/").pop();
const autoplay = new URLSearchParams(location.search).has("autoplay");
const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") +
                         location.host + "/ws/" + token);
const $ = (id) => document.getElementById(id);
const el = (tag, attrs, text) => { const e = document.createElement(tag);
  Object.assign(e, attrs || {}); if (text !== undefined) e.textContent = text; return e; };
// Cell colours: clearly different pastels, one per value (a chain, an owner), kept for the
// whole game. A value listed first in a table row (Acquire's chains) takes its row's colour,
// so every seat sees the same colours; other values take the next free one.
const PALETTE = ["#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69",
                 "#fccde5", "#bc80bd", "#ccebc5", "#ffed6f", "#d9d9d9"];
const slots = new Map();
function paint(i) { return i < PALETTE.length ? PALETTE[i]
                      : "hsl(" + Math.round(i * 137.508) % 360 + ", 65%, 80%)"; }
function coloured(cell) { return cell !== "" && cell !== "." && cell.length > 1; }
function assignColours(items) {
  const legend = [];
  for (const item of items) if (item.kind === "table")
    for (const row of item.rows) if (row[0] && !legend.includes(row[0])) legend.push(row[0]);
  for (const item of items) if (item.kind === "board")
    for (const r of item.cells) for (const cell of r) {
      if (!coloured(cell) || slots.has(cell)) continue;
      const taken = new Set(slots.values()), want = legend.indexOf(cell);
      if (want >= 0 && !taken.has(want)) { slots.set(cell, want); continue; }
      let k = legend.length; while (taken.has(k)) k++;
      slots.set(cell, k); } }
function shortNames(cells) {  // the shortest prefix (3 or 4 characters) other values lack
  const names = [...new Set(cells.filter(coloured))], out = new Map();
  for (const v of names) { let n = 3;
    while (n < 4 && names.some(w => w !== v && w.startsWith(v.slice(0, n)))) n++;
    out.set(v, v.length <= 4 ? v : v.slice(0, n)); }
  return out; }
function board(item) {
  const t = el("table", {className: "board"}); t.append(el("caption", {}, item.title));
  // fixed, equal cells (long names are shortened, in full on hover); narrower on a phone
  t.style.width = (2 + 2.6 * item.cols.length) + "rem";
  t.style.minWidth = (2 + 2 * item.cols.length) + "rem";
  const head = el("tr"); head.append(el("th", {style: "width: 2rem"}));
  for (const c of item.cols) head.append(el("th", {title: c}, c));
  t.append(head);
  const short = shortNames(item.cells.flat());
  item.rows.forEach((r, i) => { const tr = el("tr"); tr.append(el("th", {title: r}, r));
    for (const cell of item.cells[i]) {
      const plain = cell === "" || cell === ".";
      const td = el("td", {className: plain ? "empty" : "", title: plain ? "" : cell},
                    short.get(cell) || cell);
      if (slots.has(cell)) td.style.background = paint(slots.get(cell));
      tr.append(td); }
    t.append(tr); });
  return t; }
function table(item) {
  const t = el("table"); t.append(el("caption", {}, item.title));
  const head = el("tr"); for (const c of item.columns) head.append(el("th", {}, c));
  t.append(head);
  for (const row of item.rows) { const tr = el("tr");
    row.forEach((x, i) => { const td = el("td", {className: i && /^-?\\d+$/.test(x) ? "num" : ""},
                                          x);
      if (i === 0 && slots.has(x)) td.style.background = paint(slots.get(x));
      tr.append(td); });
    t.append(tr); }
  return t; }
function send(obj) { $("error").textContent = ""; $("help").hidden = true;
  ws.send(JSON.stringify(obj)); }
function showHelp(lines) { const h = $("help"); h.replaceChildren();
  for (const line of lines) h.append(el("div", {}, line));
  h.hidden = false; h.scrollTop = 0; }
function render(m) {
  $("status").textContent = m.seat_name + " — " + m.status;
  assignColours(m.view.items);
  const view = $("view"); view.replaceChildren();
  const shows = el("div");
  for (const item of m.view.items) {
    if (item.kind === "board") view.append(board(item));
    else if (item.kind === "table") view.append(table(item));
    else { const d = el("div", {className: "show"}); d.append(el("b", {}, item.label + ":"));
           d.append(document.createTextNode(item.text)); shows.append(d); } }
  view.append(shows);
  const log = $("log"); log.replaceChildren();
  for (const line of m.log) log.append(el("li", {}, line));
  log.scrollTop = log.scrollHeight;
  const menu = $("menu"); menu.replaceChildren();
  for (const g of m.menu) {
    const d = el("div", {className: "group"});
    d.append(el("span", {className: "name"},
                g.name + (g.labels.length ? " (" + g.labels.join(", ") + ")" : "")));
    if (g.options) { g.options.forEach(([k, args], i) => {
        // its number, as line mode numbers its menu: what a typed number plays
        const b = el("button", {onclick: () => send({index: k}), className: "act"});
        b.append(el("span", {className: "num"}, g.numbers[i] + ")"), " " + (args || g.name));
        d.append(b); }); }
    else { const inp = el("input", {size: 10, placeholder: g.example});
      d.append(el("span", {className: "range", title: g.count + " choices"}, g.summary + " "),
               inp,
               el("button", {onclick: () => send({answer: g.name + " " + inp.value})}, "play")); }
    menu.append(d); }
  $("typed").style.display = m.your_turn ? "" : "none";
  $("undo").disabled = !m.can_undo;
  $("undo").title = m.can_undo ? "take back your last move (u)" : m.undo_refusal;
  const ended = m.over || !!m.abandoned;
  $("leave").hidden = ended;
  if (ended) $("leaveconfirm").hidden = true;
  $("result").textContent = m.abandoned ? "Game abandoned: " + m.abandoned + "."
                          : m.over ? "Game over. " + m.result.join("; ") : "";
  document.body.dataset.over = m.over ? "yes" : m.abandoned ? "abandoned" : "no";
  if (ended && window.pageNonce) send({shown_over: window.pageNonce});
  if (autoplay && m.your_turn) {
    const first = m.menu.find(g => g.options && g.name !== "declare_end") || m.menu[0];
    setTimeout(() => send(first.options ? {index: first.options[0][0]}
                                        : {answer: first.name + " " + first.example}), 0); }
}
ws.onmessage = (e) => { const m = JSON.parse(e.data);
  if (m.error) $("error").textContent = m.error;
  else if (m.help) showHelp(m.help);
  else render(m); };
ws.onclose = (e) => { $("status").textContent += " (disconnected" +
  (e.reason ? ": " + e.reason : "") + ")"; };
$("typed").onsubmit = (e) => { e.preventDefault();
  const a = $("answer"); send({answer: a.value}); a.value = ""; };
$("helpbtn").onclick = () => { if ($("help").hidden) send({answer: "?"});
                               else $("help").hidden = true; };
function undo() { if (!$("undo").disabled) send({undo: true}); }
$("undo").onclick = undo;
// Leaving asks first (on the page, not in a browser dialog): only "leave the game" sends it.
$("leave").onclick = () => { $("leaveconfirm").hidden = false; $("leaveno").focus(); };
$("leaveno").onclick = () => { $("leaveconfirm").hidden = true; };
$("leaveyes").onclick = () => { $("leaveconfirm").hidden = true; send({leave: true}); };
// Keys, when not typing in a field: u undoes, Escape closes the question about leaving.
document.addEventListener("keydown", (e) => {
  const t = e.target;
  if (e.ctrlKey || e.metaKey || e.altKey || e.repeat || (t && (t.isContentEditable ||
      ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName)))) return;
  if (e.key === "u" || e.key === "U") { e.preventDefault(); undo(); }
  else if (e.key === "Escape") $("leaveconfirm").hidden = true;
});
</script></body></html>
"""


def serve(session: Session, host: str = "127.0.0.1", port: int = 8000,
          record: str | None = None) -> None:
    """Run the table with uvicorn until interrupted; prints each human seat's link. With
    `record`, the game record is written when the game ends or is left, and when the server
    is stopped before either (the game so far, as `play --record` does when interrupted)."""
    import uvicorn

    app = create_app(session, record)
    table: WebTable = app.state.table
    print(f"{session.game.name}: http://{host}:{port}/ (take a free seat there)")
    for token, p in sorted(table.tokens.items(), key=lambda kv: kv[1]):
        print(f"  {seat_name(p)}: http://{host}:{port}/play/{token}")
    uvicorn.run(app, host=host, port=port, log_level="warning")
    if table.left is None and not session.state.is_terminal():
        error = table.write_record()
        if error is not None:
            print(f"error: {error}", file=sys.stderr)
