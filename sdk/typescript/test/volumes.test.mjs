// Volumes and drives against a real `warren serve` (its default worker processes):
// data outlives the sandbox, one read-write holder, grow only, the quota.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Sandbox, Client, ConflictError, InvalidArgumentError, NotFoundError, sizeBytes } from "../dist/index.js";
import { startServer } from "./server.mjs";

let srv, conn;
before(async () => {
  srv = await startServer();
  conn = { apiUrl: srv.url, apiKey: await srv.tenantKey() };
});
after(() => srv?.stop());

test("a volume outlives its sandbox, with one read-write holder", async () => {
  const c = new Client(conn);
  const v = await c.createVolume("data", "1M");
  assert.deepEqual([v.name, v.size], ["data", 1 << 20]);
  const sb = await Sandbox.create({ ...conn, volumes: ["data:/data"] });
  assert.equal((await sb.commands.run("echo kept > /data/f")).exitCode, 0);
  assert.equal((await c.getVolume("data")).attached_to, sb.id);
  await assert.rejects(Sandbox.create({ ...conn, volumes: [{ name: "data", path: "/d" }] }), (e) => e instanceof ConflictError && e.message.includes(sb.id));
  await assert.rejects(c.deleteVolume("data"), ConflictError);
  const big = await sb.commands.run("head -c 2000000 /dev/zero > /data/big");
  assert.notEqual(big.exitCode, 0);
  assert.match(big.stderr, /No space left on device/);
  await sb.kill();

  const ro = await Sandbox.create({ ...conn, volumes: [{ name: "data", path: "/in", readOnly: true }] });
  const r = await ro.commands.run("cat /in/f; echo x > /in/g");
  assert.equal(r.stdout, "kept\n");
  assert.match(r.stderr, /Read-only file system/);
  assert.ok((await c.getVolume("data")).readers.includes(ro.id));
  await ro.kill();

  await assert.rejects(c.resizeVolume("data", "512K"), InvalidArgumentError);
  assert.equal((await c.resizeVolume("data", "2M")).size, 2 << 20);
  assert.deepEqual((await c.listVolumes()).map((x) => x.name), ["data"]);
  await c.deleteVolume("data");
  await assert.rejects(c.getVolume("data"), NotFoundError);
});

test("bad mounts and sizes are refused before any call", async () => {
  for (const bad of ["data", "data:rel", "data:/x:rw:extra", ":/x", { name: "v", path: "rel" }]) {
    await assert.rejects(Sandbox.create({ ...conn, volumes: [bad] }), InvalidArgumentError);
  }
  for (const bad of ["ten", "-1", 0, 1.5]) assert.throws(() => sizeBytes(bad), InvalidArgumentError);
  assert.equal(sizeBytes("10G"), 10 * 2 ** 30);
  assert.equal(sizeBytes("512MiB"), 512 * 2 ** 20);
});

test("a drive is shared by sandboxes mounted at create and at run time", async () => {
  const c = new Client(conn);
  assert.equal((await c.createDrive("team", "1M")).size, 1 << 20);
  const a = await Sandbox.create({ ...conn, drives: ["team:/team"] });
  const b = await Sandbox.create(conn);
  assert.deepEqual((await b.mount("team", "/mnt/t")).map((m) => m.path), ["/mnt/t"]);
  assert.equal((await a.commands.run("echo hello > /team/f")).exitCode, 0);
  assert.equal((await b.commands.run("cat /mnt/t/f")).stdout, "hello\n");
  assert.deepEqual(await a.mounts(), [{ drive: "team", path: "/team" }]);
  await assert.rejects(c.deleteDrive("team"), ConflictError);
  await assert.rejects(b.mount("nosuch", "/x"), NotFoundError);
  await assert.rejects(b.mount("team", "relative"), InvalidArgumentError);
  assert.deepEqual(await b.unmount("/mnt/t"), []);
  await a.kill();
  await b.kill();
  assert.deepEqual((await c.listDrives()).map((d) => d.name), ["team"]);
  await c.deleteDrive("team");
  await assert.rejects(c.getDrive("team"), NotFoundError);
});
