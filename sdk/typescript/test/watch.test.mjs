import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Sandbox, NotFoundError, InvalidArgumentError } from "../dist/index.js";
import { startServer } from "./server.mjs";

let srv;
let conn;
before(async () => {
  srv = await startServer();
  conn = { apiUrl: srv.url, apiKey: await srv.tenantKey() };
});
after(() => srv?.stop());

test("files.watch: events from the API and from commands, errors, closing", async () => {
  const sb = await Sandbox.create(conn);
  await sb.files.makeDir("/w");
  const events = [];
  const next = async () => {
    const end = Date.now() + 10000;
    while (!events.length) {
      if (Date.now() > end) throw new Error("no watch event in 10 s");
      await new Promise((r) => setTimeout(r, 20));
    }
    return events.shift();
  };
  const h = await sb.files.watch("/w", (e) => events.push(e));
  await sb.files.write("/w/a", "x");
  assert.deepEqual(await next(), { type: "create", name: "a", file_type: "file" });
  await sb.commands.run("echo more >> /w/a");
  assert.deepEqual(await next(), { type: "write", name: "a", file_type: "file" });
  await sb.files.rename("/w/a", "/w/b");
  assert.deepEqual(await next(), { type: "rename", name: "b", old_name: "a", file_type: "file" });
  await sb.files.remove("/w/b");
  assert.deepEqual(await next(), { type: "remove", name: "b" });
  h.stop();
  assert.equal(await h.done, undefined);

  await assert.rejects(sb.files.watch("/missing", () => {}), NotFoundError);
  await sb.files.write("/w/f", "x");
  await assert.rejects(sb.files.watch("/w/f", () => {}), InvalidArgumentError);

  const rec = [];
  const h2 = await sb.files.watch("/", (e) => rec.push(e), { recursive: true });
  await sb.hibernate();
  const closed = await h2.done;
  assert.deepEqual(closed, { type: "closed", reason: "hibernated" });
});
