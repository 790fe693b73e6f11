// terminal.js: the sandbox's terminal: xterm.js (vendored, see
// console/vendor.sh) on a PTY process over the server's WebSocket. The
// key travels as a WebSocket subprotocol ("bearer.KEY"), since a browser
// cannot set headers on a WebSocket; never in the URL. The terminal fits
// its box and follows the window; leaving the page hangs it up.

import "./cspshim.js";
import { Terminal as XTerm } from "./vendor/xterm.mjs";
import { FitAddon } from "./vendor/addon-fit.mjs";
import * as api from "./api.js";
import { h, clear, errText } from "./dom.js";

const CLOSE_BASE = 4000; // close code = 4000 + exit status

export class TerminalPane {
  constructor(id) {
    this.id = id;
    this.box = h("div", { class: "term", id: "term", "aria-label": "Terminal" });
    this.status = h("span", { class: "muted", id: "term-status", "aria-live": "polite" }, "Not connected.");
    this.openBtn = h("button", { type: "button", class: "primary", id: "terminal-open", onclick: () => this.open() }, "Open terminal");
    this.el = h("section", { class: "card", id: "terminal", "aria-labelledby": "terminal-h" },
      h("div", { class: "row between wrap" }, h("h2", { id: "terminal-h" }, "Terminal"), h("div", { class: "row" }, this.status, this.openBtn)),
      this.box);
    this.onWindow = () => this.fit();
  }

  async open() {
    this.close();
    this.openBtn.disabled = true;
    this.el.dataset.state = "opening";
    delete this.el.dataset.exit;
    clear(this.box);
    const term = new XTerm({ cursorBlink: true, fontSize: 14, scrollback: 2000, convertEol: false,
      fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(this.box);
    this.term = term;
    this.fitter = fit;
    fit.fit();
    try {
      const p = await api.startPTY(this.id, term.cols, term.rows);
      this.pid = p.pid;
      const proto = location.protocol === "https:" ? "wss:" : "ws:";
      const url = `${proto}//${location.host}/v1/sandboxes/${encodeURIComponent(this.id)}/processes/${p.pid}/pty`;
      const ws = new WebSocket(url, ["warren.pty", "bearer." + api.key()]);
      ws.binaryType = "arraybuffer";
      this.ws = ws;
      const enc = new TextEncoder();
      term.onData((d) => { if (ws.readyState === WebSocket.OPEN) ws.send(enc.encode(d)); });
      term.onBinary((d) => { if (ws.readyState === WebSocket.OPEN) ws.send(Uint8Array.from(d, (c) => c.charCodeAt(0))); });
      term.onResize(({ cols, rows }) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "resize", cols, rows }));
        this.box.dataset.size = `${cols}x${rows}`;
      });
      ws.onmessage = (ev) => {
        if (typeof ev.data !== "string") { term.write(new Uint8Array(ev.data)); return; }
        let m;
        try { m = JSON.parse(ev.data); } catch (_) { return; }
        if (m.type === "hello") {
          this.el.dataset.state = "open";
          this.status.textContent = `Connected (process ${m.pid}).`;
          // The window may have changed while the shell started.
          if (m.cols !== term.cols || m.rows !== term.rows) ws.send(JSON.stringify({ type: "resize", cols: term.cols, rows: term.rows }));
          this.box.dataset.size = `${term.cols}x${term.rows}`;
          term.focus();
        } else if (m.type === "error" && m.error) {
          this.status.textContent = "Terminal error: " + m.error.message;
        }
      };
      ws.onclose = (ev) => {
        if (this.ws !== ws) return;
        this.el.dataset.state = "closed";
        this.openBtn.disabled = false;
        this.openBtn.textContent = "Open a new terminal";
        if (ev.code >= CLOSE_BASE && ev.code < CLOSE_BASE + 256) {
          this.el.dataset.exit = ev.code - CLOSE_BASE;
          this.status.textContent = `The shell exited with status ${ev.code - CLOSE_BASE}.`;
        } else {
          this.status.textContent = "Disconnected" + (ev.reason ? ": " + ev.reason : ".");
        }
      };
      window.addEventListener("resize", this.onWindow);
    } catch (e) {
      this.el.dataset.state = "closed";
      this.openBtn.disabled = false;
      this.status.textContent = "Cannot open a terminal: " + errText(e);
    }
  }

  fit() {
    if (this.fitter && this.term) this.fitter.fit();
  }

  // close hangs up (the server ends the shell when its socket closes).
  close() {
    window.removeEventListener("resize", this.onWindow);
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(1000);
    if (this.term) this.term.dispose();
    this.term = null;
  }
}
