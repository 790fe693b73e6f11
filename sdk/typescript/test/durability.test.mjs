// Durability levels, generations, retention and their errors against a
// real `warren serve`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  Sandbox, errorClass, WarrenError, BudgetError, WriteBudgetError, UnavailableError, OverloadedError, ConflictError, FencedError,
  AlreadyExistsError, UnsupportedError, InvalidArgumentError, NotFoundError,
} from "../dist/index.js";
import { startServer, startStallable, need } from "./server.mjs";

let srv, conn;
before(async () => {
  srv = await startServer();
  conn = { apiUrl: srv.url, apiKey: await srv.tenantKey() };
});
after(() => srv?.stop());

test("levels on exec and file writes, with the generation reached", async () => {
  const sb = await Sandbox.create(conn);
  let r = await sb.commands.run("echo 1 > /tmp/g", { durability: "committed" });
  assert.equal(r.durability, "committed");
  assert.ok(r.generation >= 1);
  const first = r.generation;
  r = await sb.commands.run("echo 2 > /tmp/g", { durability: "committed" });
  assert.ok(r.generation > first);
  assert.equal((await sb.commands.run("echo 3 >> /tmp/g", { durability: "memory" })).durability, "memory");
  r = await sb.commands.run("echo 4 >> /tmp/g");
  assert.deepEqual([r.durability, r.generation], ["local", 0]);
  const w = await sb.files.write("/tmp/f", "x", { durability: "committed" });
  assert.equal(w.durability, "committed");
  assert.ok(w.generation > first);
  assert.deepEqual(await sb.files.write("/tmp/f", "y", { durability: "memory" }), { path: "/tmp/f", durability: "memory", generation: 0 });
  assert.equal((await sb.files.write("/tmp/f", "z")).durability, "local");
  await assert.rejects(sb.commands.run("true", { durability: "disk" }), InvalidArgumentError);
  await assert.rejects(sb.files.write("/tmp/f", "z", { durability: "fsync" }), InvalidArgumentError);
});

test("background processes: durability, waitExit, info", async () => {
  const sb = await Sandbox.create(conn);
  const h = await sb.commands.run("echo out; echo f > /f; exit 3", { background: true, durability: "committed" });
  const r = await h.waitExit();
  assert.deepEqual([r.exitCode, r.durability, r.stdout], [3, "committed", ""]);
  assert.ok(r.generation >= 1);
  const streamed = await h.wait();
  assert.deepEqual([streamed.exitCode, streamed.stdout, streamed.durability, streamed.generation], [3, "out\n", "committed", r.generation]);
  const info = await h.info();
  assert.equal(info.running, false);
  assert.equal(info.result.generation, r.generation);
});

test("a sandbox's default durability", async () => {
  const sb = await Sandbox.create({ ...conn, durability: "committed" });
  assert.equal(sb.info.durability, "committed");
  const r = await sb.commands.run("echo a > /a");
  assert.equal(r.durability, "committed");
  assert.equal((await sb.files.write("/b", "b")).durability, "committed");
});

// sb's generations once done(numbers) holds: retention runs after a commit
// is acknowledged, so a list read at once may still hold a generation it is
// about to forget.
async function settled(sb, done, what) {
  const deadline = Date.now() + 10000;
  for (;;) {
    const gens = await sb.generations();
    if (done(gens.map((g) => g.number))) return gens;
    if (Date.now() > deadline) assert.fail(`${what}: generations ${gens.map((g) => g.number)} after 10 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("generations, retention and fromGeneration", async () => {
  const sb = await Sandbox.create({ ...conn, retention: { keepLast: 3, keepForMs: -1000 } });
  const gens = [];
  for (let i = 0; i < 5; i++) gens.push((await sb.commands.run(`echo ${i} > /v`, { durability: "committed" })).generation);
  const listed = await settled(sb, (nums) => nums.length <= 3, "keepLast 3");
  assert.deepEqual(listed.map((g) => g.number), gens.slice(-3));
  assert.deepEqual(listed.map((g) => g.head), [false, false, true]);
  assert.ok(listed.every((g) => g.sandbox === sb.id && g.epoch >= 1 && g.created_at && Array.isArray(g.pinned_by)));
  const old = listed[0];
  const kid = await Sandbox.create({ ...conn, fromGeneration: old });
  assert.equal(await kid.files.read("/v"), "2\n");
  const kid2 = await Sandbox.create({ ...conn, fromGeneration: { sandbox: sb.id, generation: listed[1].number } });
  assert.equal(await kid2.files.read("/v"), "3\n");
  for (let i = 0; i < 3; i++) await sb.commands.run(`echo ${5 + i} > /v`, { durability: "committed" });
  // An unpinned generation past keepLast goes; the pinned ones stay.
  const after = await settled(sb, (nums) => !nums.includes(listed[2].number), "retention past keepLast");
  const byNumber = new Map(after.map((g) => [g.number, g]));
  assert.ok(byNumber.get(old.number)?.pinned_by.includes(`sandbox:${kid.id}`), "the new sandbox does not pin its generation");
  assert.equal(byNumber.size, 5, `${[...byNumber.keys()]}: want the last three and the two pinned`);
  await assert.rejects(Sandbox.create({ ...conn, fromGeneration: { sandbox: sb.id, generation: 999 } }), (e) => e instanceof NotFoundError && /999/.test(e.message));
  await assert.rejects(Sandbox.create({ ...conn, retention: { keepLast: -1 } }), InvalidArgumentError);
});

test("a snapshot of a standby sandbox pins its generation", async () => {
  const sb = await Sandbox.create({ ...conn, retention: { keepLast: 1, keepForMs: -1000 } });
  await sb.commands.run("echo pinned > /p", { durability: "committed" });
  await sb.hibernate();
  await sb.snapshot("ts-pin");
  const head = (await sb.generations()).filter((g) => g.head);
  assert.equal(head.length, 1);
  assert.deepEqual(head[0].pinned_by, ["snapshot:ts-pin"]);
  for (let i = 0; i < 3; i++) await sb.commands.run(`echo ${i} > /p`, { durability: "committed" });
  const kept = (await sb.generations()).find((g) => g.number === head[0].number);
  assert.ok(kept, "the snapshot's generation went with the retention");
  assert.equal(await (await Sandbox.create({ ...conn, fromGeneration: kept })).files.read("/p"), "pinned\n");
});

test("write budget exhausted: WriteBudgetError with retryAfterMs", async (t) => {
  const s = await startStallable();
  if (!s) return need(t, "versitygw", "the write-budget test stalls a real S3 server (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)");
  try {
    const c = { apiUrl: s.url, apiKey: s.key };
    const sb = await Sandbox.create({ ...c, standbyAfterMs: -1000 });
    await sb.files.write("/before", "b", { durability: "committed" });
    s.pause();
    const r = await sb.commands.run("head -c 3000000 /dev/urandom > /big; echo $?", { durability: "memory" });
    assert.equal(r.stdout, "1\n");
    assert.match(r.stderr, /write budget exhausted/);
    await assert.rejects(sb.files.write("/up", "up", { durability: "memory" }), (e) => {
      assert.ok(e instanceof WriteBudgetError && e instanceof BudgetError, e.name);
      assert.deepEqual([e.status, e.code], [507, "write_budget_exhausted"]);
      assert.ok(e.retryAfterMs >= 1000, `retryAfterMs ${e.retryAfterMs}`);
      return true;
    });
    s.resume();
    assert.equal((await sb.commands.run("rm -f /big", { durability: "committed" })).durability, "committed");
    assert.equal((await sb.files.write("/up", "up")).durability, "local");
  } finally {
    await s.stop();
  }
});

test("overloaded: OverloadedError with retryAfterMs", async () => {
  const s = await startServer(["--workers", "0", "--shed-above", "1B"]);
  try {
    await assert.rejects(Sandbox.create({ apiUrl: s.url, apiKey: await s.tenantKey() }), (e) => {
      assert.ok(e instanceof OverloadedError && e instanceof UnavailableError, e.name);
      assert.deepEqual([e.status, e.code], [503, "overloaded"]);
      assert.ok(e.retryAfterMs >= 1000);
      assert.match(e.message, /memory pressure/);
      return true;
    });
  } finally {
    await s.stop();
  }
});

test("error classes by code and status", () => {
  // The table the server's codes map through (api/errors.go); the tests
  // above see the ones one node can produce for real.
  const cases = [
    [507, "write_budget_exhausted", "write budget exhausted", WriteBudgetError],
    [507, "insufficient_storage", "disk quota", BudgetError],
    [503, "overloaded", "shedding", OverloadedError],
    [503, "unavailable", "worker restarting", UnavailableError],
    [409, "failed_precondition", "sandbox sb-1: another node took it over; its writes here are refused: fenced: epoch 3", FencedError],
    [409, "failed_precondition", "no write log on this node", ConflictError],
    [409, "already_exists", "snapshot s1", AlreadyExistsError],
    [501, "not_implemented", "not a fleet node", UnsupportedError],
    [418, "", "teapot", WarrenError],
  ];
  for (const [status, code, message, cls] of cases) assert.equal(errorClass(status, code, message), cls, `${status} ${code}`);
});
