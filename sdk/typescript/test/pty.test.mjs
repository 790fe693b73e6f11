import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { Sandbox } from "../dist/index.js";
import { startServer } from "./server.mjs";

// @xterm/headless is xterm.js without a DOM: the browser console's
// terminal emulator, here rendering what the server's PTY sends.
const { Terminal } = createRequire(import.meta.url)("@xterm/headless");

let srv;
let conn;
before(async () => {
  srv = await startServer();
  conn = { apiUrl: srv.url, apiKey: await srv.tenantKey() };
});
after(() => srv?.stop());

// waitFor polls fn until it returns a truthy value (10 s).
async function waitFor(what, fn) {
  const end = Date.now() + 10000;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("pty: prompt, stty size, resize, ^C, exit status", async () => {
  const sb = await Sandbox.create({ ...conn, envs: { PS1: "\\u@\\h \\w\\$ " } });
  const chunks = [];
  const term = new Terminal({ cols: 80, rows: 24, allowProposedApi: true });
  const pty = await sb.pty.create({
    cols: 80, rows: 24,
    onData: (d) => {
      chunks.push(d);
      term.write(d);
    },
  });
  const text = () => new TextDecoder().decode(Buffer.concat(chunks));
  let mark = 0;
  const expect = async (s) => {
    const i = await waitFor(JSON.stringify(s), () => {
      const j = text().indexOf(s, mark);
      return j >= 0 ? j + 1 : 0;
    });
    mark = i - 1 + s.length;
  };
  const line = (n) => term.buffer.active.getLine(n)?.translateToString(true) ?? "";
  const screen = () => Array.from({ length: term.rows }, (_, i) => line(term.buffer.active.viewportY + i)).join("\n");

  await expect("$ ");
  // The emulator draws the prompt on the first row with the cursor after it.
  await waitFor("the rendered prompt", () => line(0) === "user@sandbox ~$ ");
  assert.equal(term.buffer.active.cursorX, "user@sandbox ~$ ".length);

  await pty.sendInput("stty size\r");
  await expect("24 80\r\n");
  await pty.resize({ cols: 100, rows: 40 });
  await pty.sendInput("stty size; echo cols=$COLUMNS\r");
  await expect("40 100\r\ncols=100\r\n");
  // Line editing renders as typed: ^A and insert.
  await pty.sendInput("cho edited\x01e\r");
  await expect("edited\r\n");
  await waitFor("the edited line rendered", () => screen().includes("user@sandbox ~$ echo edited\nedited"));

  await pty.sendInput("sleep 100\r");
  await expect("sleep 100\r\n");
  await new Promise((r) => setTimeout(r, 100));
  await pty.sendInput("\x03");
  await expect("^C");
  await pty.sendInput("echo status=$?\r");
  await expect("status=130\r\n");

  const [p] = (await sb.commands.list()).filter((x) => x.pid === pty.pid);
  assert.deepEqual(p.pty, { cols: 100, rows: 40 });
  await pty.sendInput("exit 3\r");
  const res = await pty.wait();
  assert.equal(res.exitCode, 3);
});

test("pty: a command on a terminal, and a hangup", async () => {
  const sb = await Sandbox.create(conn);
  const pty = await sb.pty.create({ cols: 33, rows: 11, cmd: "[ -t 1 ] && stty size" });
  const res = await pty.wait();
  assert.equal(res.exitCode, 0);
  assert.equal(res.stdout, "11 33\r\n");
  const slow = await sb.pty.create({ cols: 80, rows: 24, cmd: "sleep 5", timeoutMs: 300 });
  assert.equal((await slow.wait()).exitCode, 124);
  const sh = await sb.pty.create({ cols: 80, rows: 24 });
  await sh.kill();
  const r2 = await sh.wait();
  assert.equal(r2.limit, "signal:HUP");
});
