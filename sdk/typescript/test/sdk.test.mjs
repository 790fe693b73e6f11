import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  Sandbox, OPERATIONS, ABSENT, NotFoundError, AuthenticationError, UnavailableError, InvalidArgumentError, ConflictError,
} from "../dist/index.js";
import { startServer } from "./server.mjs";
import { readFileSync } from "node:fs";

let srv;
let conn;
before(async () => {
  srv = await startServer();
  conn = { apiUrl: srv.url, apiKey: await srv.tenantKey() };
});
after(() => srv?.stop());

test("run: results, streaming, state, env fallback", async () => {
  process.env.WARREN_SERVER = conn.apiUrl;
  process.env.WARREN_API_KEY = conn.apiKey;
  const sb = await Sandbox.create({ labels: { sdk: "ts" } });
  delete process.env.WARREN_SERVER;
  delete process.env.WARREN_API_KEY;
  let r = await sb.commands.run("echo out; echo err >&2; exit 3");
  assert.deepEqual([r.exitCode, r.stdout, r.stderr], [3, "out\n", "err\n"]);
  const seen = [];
  r = await sb.commands.run("for i in 1 2 3; do echo $i; done", { onStdout: (s) => seen.push(s) });
  assert.equal(seen.join(""), "1\n2\n3\n");
  r = await sb.commands.run("cat; echo $K; pwd", { stdin: "in\n", envs: { K: "v" }, cwd: "/tmp" });
  assert.equal(r.stdout, "in\nv\n/tmp\n");
  await sb.commands.run("X=7");
  assert.equal((await sb.commands.run("echo $X")).stdout, "7\n");
  r = await sb.commands.run("sleep 5", { timeoutMs: 300 });
  assert.equal(r.limit, "timeout");
  assert.notEqual(r.exitCode, 0);
  const listed = await Sandbox.list({ ...conn, labels: { sdk: "ts" } });
  assert.deepEqual(listed.map((s) => s.id), [sb.id]);
});

test("non-UTF-8 output keeps its bytes", async () => {
  const sb = await Sandbox.create(conn);
  const r = await sb.commands.run("printf 'a\\377b'");
  assert.deepEqual([...r.stdoutBytes], [0x61, 0xff, 0x62]);
  assert.equal(r.stdout, "a\ufffdb");
});

test("aborting a stream cancels the exec on the server", async () => {
  const sb = await Sandbox.create(conn);
  const ac = new AbortController();
  await assert.rejects(
    sb.commands.run("echo started; sleep 1.5; touch /tmp/finished", { signal: ac.signal, onStdout: () => ac.abort() }),
    (e) => e.name === "AbortError",
  );
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(await sb.files.exists("/tmp/finished"), false, "the exec went on after its stream was aborted");
  // A callback that throws aborts too.
  await assert.rejects(sb.commands.run("echo x; sleep 1.5; touch /tmp/f2", { onStdout: () => { throw new Error("stop"); } }), /stop/);
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(await sb.files.exists("/tmp/f2"), false);
});

test("files: binary-safe round trips and the rest", async () => {
  const sb = await Sandbox.create(conn);
  const all = new Uint8Array(1024).map((_, i) => i % 256);
  await sb.files.write("/w/bin", all);
  assert.deepEqual(await sb.files.read("/w/bin", { format: "bytes" }), all);
  assert.deepEqual(await sb.files.read("/w/bin", { format: "bytes", offset: 250, length: 10 }), all.slice(250, 260));
  await sb.files.write("/w/t.txt", "héllo\n");
  await sb.files.write("/w/t.txt", "more\n", { append: true });
  assert.equal(await sb.files.read("/w/t.txt"), "héllo\nmore\n");
  await sb.files.makeDir("/w/d/e");
  await sb.files.rename("/w/t.txt", "/w/d/e/u.txt");
  const paths = (await sb.files.list("/w", { recursive: true })).map((e) => e.path);
  assert.ok(paths.includes("/w/d/e/u.txt") && !paths.includes("/w/t.txt"), paths.join(","));
  assert.equal((await sb.files.stat("/w/bin")).size, 1024);
  await sb.files.remove("/w/d", { recursive: true });
  assert.equal(await sb.files.exists("/w/d/e/u.txt"), false);
  await assert.rejects(sb.files.read("/nope"), NotFoundError);
  await assert.rejects(sb.files.read("/w/bin", { format: "yaml" }), InvalidArgumentError);
});

test("a shell job outlives its exec and is listed with its %N and $!", async () => {
  const sb = await Sandbox.create({ ...conn, standbyWithJobs: true });
  const shellPid = Number((await sb.commands.run("sleep 100 & echo $!")).stdout);
  const jobs = (await sb.commands.list()).filter((p) => p.job);
  assert.deepEqual(jobs.map((p) => [p.job, p.shell_pid, p.running]), [[1, shellPid, true]]);
  assert.match((await sb.commands.run("jobs")).stdout, /^\[1\]\+  Running/);
  await sb.commands.run("kill %1");
});

test("background processes: stdin, wait, kill", async () => {
  const sb = await Sandbox.create(conn);
  const h = await sb.commands.run("while read l; do echo got $l; done; exit 4", { background: true });
  assert.ok(h.pid > 0);
  await h.sendStdin("a\n");
  await h.sendStdin("b\n", { close: true });
  const r = await h.wait();
  assert.deepEqual([r.exitCode, r.stdout], [4, "got a\ngot b\n"]);
  const h2 = await sb.commands.run("sleep 100", { background: true });
  await h2.kill();
  assert.notEqual((await h2.wait()).exitCode, 0);
});

test("hibernate, resume, fork, snapshot", async () => {
  const sb = await Sandbox.create(conn);
  await sb.commands.run("echo kept > /k; V=1");
  await sb.hibernate();
  assert.equal(sb.info.state, "standby");
  assert.equal((await sb.commands.run("cat /k; echo $V")).stdout, "kept\n1\n");
  const kids = await sb.fork(2);
  assert.equal(kids.length, 2);
  assert.ok(kids.every((k) => k.info.parent === sb.id));
  await kids[0].files.write("/k", "changed\n");
  assert.equal(await sb.files.read("/k"), "kept\n");
  await sb.snapshot("s1");
  const again = await Sandbox.create({ ...conn, snapshot: "s1" });
  assert.equal(await again.files.read("/k"), "kept\n");
  await assert.rejects(sb.snapshot("s1"), ConflictError);
  await sb.kill();
  await assert.rejects(Sandbox.connect(sb.id, conn), NotFoundError);
});

test("typed errors", async () => {
  await assert.rejects(Sandbox.create({ apiUrl: conn.apiUrl, apiKey: "not-a-key" }), (e) => e instanceof AuthenticationError && /unknown API key/.test(e.message));
  await assert.rejects(Sandbox.create({ apiUrl: "http://127.0.0.1:9", apiKey: "k" }), UnavailableError);
  await assert.rejects(Sandbox.create({ ...conn, limits: { timeout: "forever" } }), InvalidArgumentError);
});

test("every OpenAPI operation is covered or listed as absent", async () => {
  const doc = await (await fetch(`${conn.apiUrl}/v1/openapi.json`)).json();
  const served = new Set();
  for (const [p, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) if (m !== "parameters") served.add(`${m.toUpperCase()} ${p}`);
  const covered = new Set(Object.values(OPERATIONS).map(([m, p]) => `${m} ${p}`));
  const missing = [...served].filter((o) => !covered.has(o) && !(o in ABSENT));
  assert.deepEqual(missing, [], "OpenAPI operations the TypeScript SDK neither covers nor lists in ABSENT");
  const stale = [...covered, ...Object.keys(ABSENT)].filter((o) => !served.has(o));
  assert.deepEqual(stale, [], "operations the SDK names that the server no longer serves");
});

test("every operation in OPERATIONS has a method", () => {
  // OPERATIONS is what the SDK claims to cover: each one must be called.
  const src = readFileSync(new URL("../src/index.ts", import.meta.url), "utf8");
  const body = src.slice(src.indexOf("} as const;"));
  const unused = Object.keys(OPERATIONS).filter((op) => !body.includes(`"${op}"`));
  assert.deepEqual(unused, [], "operations the TypeScript SDK never calls");
});

test("create and run options reach the server", async () => {
  const sb = await Sandbox.create({ ...conn, user: "root", hostname: "box", commands: "resident-only", security: "relaxed", standbyAfterMs: 30000 });
  assert.deepEqual([sb.info.user, sb.info.hostname, sb.info.commands, sb.info.security, sb.info.standby_after], ["root", "box", "resident-only", "relaxed", "30s"]);
  let r = await sb.commands.run("id -un; hostname; git apply --3way x");
  assert.equal(r.stdout, "root\nbox\n");
  assert.equal(r.exitCode, 2);
  assert.match(r.stderr, /\(commands policy resident-only\)/);
  assert.deepEqual(r.rungs, { resident: 2, missing: 1 });
  r = await sb.commands.run("git apply --3way x", { commands: "resident-first" });
  assert.equal(r.exitCode, 2);
  assert.doesNotMatch(r.stderr, /resident-only/);
  const [kid] = await sb.fork(1, { labels: { kid: "1" } });
  assert.deepEqual(kid.info.labels, { kid: "1" });
  await assert.rejects(Sandbox.create({ ...conn, security: "none" }), (e) => e instanceof InvalidArgumentError && /none/.test(e.message));
});
