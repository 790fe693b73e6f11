// Starts a real `warren serve` (built from this checkout, or $WARREN_BIN) on
// a loopback port with a temporary data directory.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { Client } from "../dist/index.js";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export async function startServer() {
  const tmp = mkdtempSync(join(tmpdir(), "warren-tssdk-"));
  let bin = process.env.WARREN_BIN;
  if (!bin) {
    bin = join(tmp, "warren");
    execFileSync("go", ["build", "-o", bin, "./cmd/warren"], { cwd: repo, stdio: "inherit" });
  }
  const data = join(tmp, "data");
  const proc = spawn(bin, ["serve", "--addr", "127.0.0.1:0", "--data", data, "--no-native"], { stdio: ["ignore", "pipe", "ignore"] });
  const rl = createInterface({ input: proc.stdout });
  const url = await new Promise((resolve, reject) => {
    let u;
    const timer = setTimeout(() => reject(new Error("warren serve did not start in 60 s")), 60000);
    rl.on("line", (l) => {
      const m = /warren listening on (http:\S+)/.exec(l);
      if (m) u = m[1];
      if (l.startsWith("admin key file:")) {
        clearTimeout(timer);
        resolve(u);
      }
    });
    proc.on("exit", (c) => reject(new Error(`warren serve exited with ${c}`)));
  });
  const admin = readFileSync(join(data, "admin.key"), "utf8").trim();
  let seq = 0;
  return {
    url,
    admin,
    async tenantKey() {
      return new Client({ apiUrl: url, apiKey: admin }).createKey(`ts${++seq}`);
    },
    stop() {
      proc.kill("SIGTERM");
    },
  };
}
