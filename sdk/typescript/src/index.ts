// warren TypeScript SDK: sandboxes, commands, files. No runtime
// dependencies: global fetch and streams (Node 18+, browsers, Deno, Bun).
//
//   const sb = await Sandbox.create();            // WARREN_SERVER, WARREN_API_KEY
//   const r = await sb.commands.run("echo hi");
//   console.log(r.exitCode, r.stdout);
//
// Every HTTP call goes through one table (OPERATIONS), which a test compares
// with the server's /v1/openapi.json; ABSENT names what is left out on
// purpose.

export const OPERATIONS = {
  health: ["GET", "/healthz"],
  createKey: ["POST", "/v1/keys"],
  create: ["POST", "/v1/sandboxes"],
  list: ["GET", "/v1/sandboxes"],
  get: ["GET", "/v1/sandboxes/{id}"],
  delete: ["DELETE", "/v1/sandboxes/{id}"],
  exec: ["POST", "/v1/sandboxes/{id}/exec"],
  startProcess: ["POST", "/v1/sandboxes/{id}/processes"],
  listProcesses: ["GET", "/v1/sandboxes/{id}/processes"],
  getProcess: ["GET", "/v1/sandboxes/{id}/processes/{pid}"],
  attachProcess: ["GET", "/v1/sandboxes/{id}/processes/{pid}/attach"],
  waitProcess: ["GET", "/v1/sandboxes/{id}/processes/{pid}/wait"],
  stdinProcess: ["POST", "/v1/sandboxes/{id}/processes/{pid}/stdin"],
  signalProcess: ["POST", "/v1/sandboxes/{id}/processes/{pid}/signal"],
  resizeProcess: ["POST", "/v1/sandboxes/{id}/processes/{pid}/resize"],
  getFiles: ["GET", "/v1/sandboxes/{id}/files"],
  putFiles: ["PUT", "/v1/sandboxes/{id}/files"],
  deleteFiles: ["DELETE", "/v1/sandboxes/{id}/files"],
  mkdir: ["POST", "/v1/sandboxes/{id}/files/mkdir"],
  move: ["POST", "/v1/sandboxes/{id}/files/move"],
  watchFiles: ["GET", "/v1/sandboxes/{id}/files/watch"],
  hibernate: ["POST", "/v1/sandboxes/{id}/hibernate"],
  resume: ["POST", "/v1/sandboxes/{id}/resume"],
  fork: ["POST", "/v1/sandboxes/{id}/fork"],
  createSnapshot: ["POST", "/v1/sandboxes/{id}/snapshots"],
  listSnapshots: ["GET", "/v1/snapshots"],
  getSnapshot: ["GET", "/v1/snapshots/{name}"],
  deleteSnapshot: ["DELETE", "/v1/snapshots/{name}"],
  listImages: ["GET", "/v1/images"],
  buildImage: ["POST", "/v1/images"],
  deleteImage: ["DELETE", "/v1/images/{name}"],
  getNetwork: ["GET", "/v1/sandboxes/{id}/network"],
  setNetwork: ["PUT", "/v1/sandboxes/{id}/network"],
  listGenerations: ["GET", "/v1/sandboxes/{id}/generations"],
  createVolume: ["POST", "/v1/volumes"],
  listVolumes: ["GET", "/v1/volumes"],
  getVolume: ["GET", "/v1/volumes/{name}"],
  resizeVolume: ["PATCH", "/v1/volumes/{name}"],
  deleteVolume: ["DELETE", "/v1/volumes/{name}"],
  createDrive: ["POST", "/v1/drives"],
  listDrives: ["GET", "/v1/drives"],
  getDrive: ["GET", "/v1/drives/{name}"],
  deleteDrive: ["DELETE", "/v1/drives/{name}"],
  mountDrive: ["POST", "/v1/sandboxes/{id}/mounts"],
  listMounts: ["GET", "/v1/sandboxes/{id}/mounts"],
  unmountDrive: ["DELETE", "/v1/sandboxes/{id}/mounts"],
} as const;

export type Operation = keyof typeof OPERATIONS;

export const ABSENT: Record<string, string> = {
  "GET /metrics": "Prometheus scrapes it; not an SDK concern",
  "GET /v1/openapi.json": "the API's own description",
  "POST /v1/mcp": "MCP clients speak it, not this SDK",
  "GET /v1/nodes": "fleet operators' call (admin key, a fleet node only): warren node ls; not what a sandbox user does",
  "POST /v1/nodes/{id}/drain": "fleet operators' call (admin key, a fleet node only): warren node drain",
  "GET /v1/sandboxes/{id}/processes/{pid}/pty":
    "the WebSocket is for browsers (the console); sandbox.pty uses stdin, attach and resize, which need no WebSocket (Node 18+)",
};

export const DEFAULT_API_URL = "http://127.0.0.1:7711";

// Errors: one class per status family, all WarrenError; a few codes get
// a subclass of their family's.
export class WarrenError extends Error {
  constructor(
    message: string,
    public readonly status = 0,
    public readonly code = "",
    /** How long the server asked to wait before retrying (Retry-After), in ms. */
    public readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
/** 401/403: no key, an unknown key, or an admin-only call. */
export class AuthenticationError extends WarrenError {}
/** 404: no such sandbox, file, process, snapshot or generation (for this tenant). */
export class NotFoundError extends WarrenError {}
/** 400/422: the request is wrong; the message names the field. */
export class InvalidArgumentError extends WarrenError {}
/** 409: already exists, or the state does not allow the call. */
export class ConflictError extends WarrenError {}
/** 409 already_exists: e.g. a snapshot name that is taken. */
export class AlreadyExistsError extends ConflictError {}
/** 409: another node took the sandbox over; this node refuses its writes. Reconnect. */
export class FencedError extends ConflictError {}
/** 413/429/507: a size, quota or rate limit. */
export class BudgetError extends WarrenError {}
/**
 * 507 write_budget_exhausted: the sandbox (or node) holds as much data not
 * yet committed to object storage as its budget allows. The write changed
 * nothing; retry after retryAfterMs.
 */
export class WriteBudgetError extends BudgetError {}
/** 504: the server gave up waiting. (A command's own time limit is a result: CommandResult.limit.) */
export class TimeoutError extends WarrenError {}
/** 503, or the server could not be reached. */
export class UnavailableError extends WarrenError {}
/** 503 overloaded: the node sheds new work under memory pressure; retry after retryAfterMs. */
export class OverloadedError extends UnavailableError {}
/** 501: this server does not offer the call (e.g. node administration outside a fleet). */
export class UnsupportedError extends WarrenError {}

type ErrorClass = new (m: string, s: number, c: string, r?: number) => WarrenError;

const byStatus: Record<number, ErrorClass> = {
  400: InvalidArgumentError, 401: AuthenticationError, 403: AuthenticationError, 404: NotFoundError,
  409: ConflictError, 413: BudgetError, 422: InvalidArgumentError, 429: BudgetError,
  501: UnsupportedError, 503: UnavailableError, 504: TimeoutError, 507: BudgetError,
};

// Codes more precise than their status (api/errors.go has the table).
const byCode: Record<string, ErrorClass> = {
  already_exists: AlreadyExistsError,
  write_budget_exhausted: WriteBudgetError,
  overloaded: OverloadedError,
  not_implemented: UnsupportedError,
};

/** The class of an error the server reported (exported for tests). */
export function errorClass(status: number, code: string, message: string): ErrorClass {
  // A fenced commit has no code of its own on the wire: failed_precondition
  // with "fenced" in the message.
  if (code === "failed_precondition" && message.includes("fenced")) return FencedError;
  return byCode[code] ?? byStatus[status] ?? WarrenError;
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header || !/^\d+(\.\d+)?$/.test(header.trim())) return undefined;
  return Number(header) * 1000;
}

async function errorFor(resp: Response): Promise<WarrenError> {
  const text = await resp.text();
  let code = "", message = "";
  try {
    const body = JSON.parse(text);
    code = body?.error?.code ?? "";
    message = body?.error?.message ?? "";
  } catch {
    message = text.trim();
  }
  message ||= `HTTP ${resp.status}`;
  const Cls = errorClass(resp.status, code, message);
  return new Cls(message, resp.status, code, retryAfterMs(resp.headers.get("Retry-After")));
}

export interface ConnectionOptions {
  /** Server URL (default $WARREN_SERVER, else http://127.0.0.1:7711). */
  apiUrl?: string;
  /** API key (default $WARREN_API_KEY). */
  apiKey?: string;
}

function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return p?.env?.[name];
}

type Query = Record<string, string | number | boolean | undefined> | [string, string][];

interface Call {
  path?: Record<string, string | number>;
  query?: Query;
  json?: unknown;
  body?: Uint8Array | string;
  contentType?: string;
  signal?: AbortSignal;
}

class Transport {
  readonly url: string;
  readonly key: string;
  constructor(opts: ConnectionOptions = {}) {
    this.url = (opts.apiUrl ?? env("WARREN_SERVER") ?? DEFAULT_API_URL).replace(/\/+$/, "");
    this.key = opts.apiKey ?? env("WARREN_API_KEY") ?? "";
  }

  async send(op: Operation, c: Call = {}): Promise<Response> {
    const [method, template] = OPERATIONS[op];
    const path = template.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(String(c.path?.[k] ?? "")));
    const u = new URL(this.url + path);
    const pairs = Array.isArray(c.query) ? c.query : Object.entries(c.query ?? {});
    for (const [k, v] of pairs) if (v !== undefined && v !== false) u.searchParams.append(k, String(v));
    const headers: Record<string, string> = {};
    if (this.key) headers["Authorization"] = `Bearer ${this.key}`;
    let body: BodyInit | undefined;
    if (c.json !== undefined) {
      body = JSON.stringify(c.json);
      headers["Content-Type"] = "application/json";
    } else if (c.body !== undefined) {
      body = c.body as BodyInit;
      headers["Content-Type"] = c.contentType ?? "application/octet-stream";
    }
    let resp: Response;
    try {
      resp = await fetch(u, { method, headers, body, signal: c.signal });
    } catch (e) {
      if ((e as Error).name === "AbortError") throw e;
      throw new UnavailableError(`cannot reach warren at ${this.url}: ${(e as Error).message}`);
    }
    if (resp.status >= 400) throw await errorFor(resp);
    return resp;
  }

  /** An attach stream as bytes: onData gets each chunk of stdout. */
  async bytes(op: Operation, c: Call, onData?: (data: Uint8Array) => void): Promise<CommandResult> {
    const enc = new TextEncoder();
    return this.stream(op, c, undefined, undefined, (ev) => {
      let data: Uint8Array | undefined;
      if (typeof ev.stdout === "string") data = enc.encode(ev.stdout);
      else if (typeof ev.stdout_b64 === "string") data = b64decode(ev.stdout_b64);
      if (data) onData?.(data);
    });
  }

  async json<T>(op: Operation, c: Call = {}): Promise<T> {
    return (await (await this.send(op, c)).json()) as T;
  }

  async stream(op: Operation, c: Call, onStdout?: (s: string) => void, onStderr?: (s: string) => void, onEvent?: (ev: Record<string, unknown>) => void): Promise<CommandResult> {
    const resp = await this.send(op, c);
    const reader = new EventReader(onStdout, onStderr, onEvent);
    const decoder = new TextDecoder();
    let buf = "";
    const body = resp.body;
    if (!body) throw new UnavailableError("the exec response has no body");
    const rd = body.getReader();
    try {
      for (;;) {
        const { value, done } = await rd.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          reader.line(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
        }
      }
    } catch (e) {
      // A callback threw or the caller aborted: cancelling the body closes
      // the connection, and the server cancels the exec.
      await rd.cancel().catch(() => {});
      if (e instanceof WarrenError || (e as Error).name === "AbortError") throw e;
      if (!(e instanceof TypeError)) throw e;
      throw new UnavailableError(`connection to warren lost during exec: ${(e as Error).message}`);
    }
    reader.line(buf);
    return reader.done();
  }
}

/** A command's outcome: a non-zero exitCode is a result, not an exception. */
export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Exact bytes (stdout/stderr show bytes that are not UTF-8 as U+FFFD). */
  stdoutBytes: Uint8Array;
  stderrBytes: Uint8Array;
  durationMs: number;
  /** The limit that stopped the command ("timeout", "output", "memory") or "signal:NAME". */
  limit: string;
  truncated: boolean;
  /** The level the command's writes reached before the reply. */
  durability: Durability | "";
  /** The committed generation holding them (durability "committed"), else 0. */
  generation: number;
  /** CPU time of the command's native processes. */
  cpuSeconds: number;
  /** Commands by the rung they ran on: resident, wasm, native, missing. */
  rungs: Record<string, number>;
  /** Resident refusals run on another rung, by command. */
  fallbacks: Record<string, number>;
}

/**
 * How far a write must go before warren answers: applied in memory, in the
 * node's fsynced write log (the server's default), or in a generation
 * published to object storage.
 */
export type Durability = "memory" | "local" | "committed";

const durabilities: readonly string[] = ["memory", "local", "committed"];

function checkDurability(d: string | undefined): void {
  if (d !== undefined && !durabilities.includes(d)) {
    throw new InvalidArgumentError(`durability ${JSON.stringify(d)}: want "memory", "local" or "committed"`);
  }
}

function b64decode(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

// The result of an exit event (or an ExecResult) with the output given.
function commandResult(ev: Record<string, any>, stdoutBytes: Uint8Array, stderrBytes: Uint8Array): CommandResult {
  return {
    exitCode: ev.exit ?? 0, stdoutBytes, stderrBytes,
    stdout: new TextDecoder().decode(stdoutBytes), stderr: new TextDecoder().decode(stderrBytes),
    durationMs: ev.duration_ms ?? 0, limit: ev.limit ?? "", truncated: !!ev.truncated,
    durability: ev.durability ?? "", generation: ev.generation ?? 0, cpuSeconds: ev.cpu_seconds ?? 0,
    rungs: ev.rungs ?? {}, fallbacks: ev.fallbacks ?? {},
  };
}

class EventReader {
  private out: Uint8Array[] = [];
  private err: Uint8Array[] = [];
  private result?: CommandResult;
  private enc = new TextEncoder();
  constructor(private onStdout?: (s: string) => void, private onStderr?: (s: string) => void, private onEvent?: (ev: Record<string, unknown>) => void) {}

  line(l: string): void {
    if (!l.trim()) return;
    const ev = JSON.parse(l);
    this.onEvent?.(ev);
    if (ev.error) {
      const code: string = ev.error.code ?? "", message: string = ev.error.message ?? "exec failed";
      throw new (errorClass(0, code, message))(message, 0, code);
    }
    for (const [key, parts, cb] of [["stdout", this.out, this.onStdout], ["stderr", this.err, this.onStderr]] as const) {
      let data: Uint8Array | undefined;
      if (typeof ev[key] === "string") data = this.enc.encode(ev[key]);
      else if (typeof ev[key + "_b64"] === "string") data = b64decode(ev[key + "_b64"]);
      if (data) {
        parts.push(data);
        cb?.(new TextDecoder().decode(data));
      }
    }
    if (typeof ev.exit === "number") this.result = commandResult(ev, concat(this.out), concat(this.err));
  }

  done(): CommandResult {
    if (!this.result) throw new UnavailableError("the exec stream ended without an exit status (connection lost)");
    return this.result;
  }
}

export interface RunOptions {
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
  cwd?: string;
  envs?: Record<string, string>;
  timeoutMs?: number;
  stdin?: string;
  session?: string;
  /** Abort the command: the stream closes and the server cancels the exec. */
  signal?: AbortSignal;
  /** How far the command's writes must go before the result (default the sandbox's); the result says what they reached. */
  durability?: Durability;
  /** This run's commands policy over the sandbox's ("native-first", "git=native"). */
  commands?: string;
}

function execBody(cmd: string, o: RunOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { script: cmd };
  if (o.cwd) body.cwd = o.cwd;
  if (o.envs) body.env = o.envs;
  if (o.timeoutMs !== undefined) body.timeout = `${Math.round(o.timeoutMs)}ms`;
  if (o.stdin !== undefined) body.stdin = o.stdin;
  if (o.session) body.session = o.session;
  checkDurability(o.durability);
  if (o.durability) body.durability = o.durability;
  if (o.commands) body.commands = o.commands;
  return body;
}

/** A background command. */
export class CommandHandle {
  constructor(private readonly sb: Sandbox, readonly pid: number) {}
  /** Output from the start (within the server's replay bound) until it exits. */
  wait(o: { onStdout?: (s: string) => void; onStderr?: (s: string) => void } = {}): Promise<CommandResult> {
    return this.sb.t.stream("attachProcess", { path: { id: this.sb.id, pid: this.pid } }, o.onStdout, o.onStderr);
  }
  async sendStdin(data: string | Uint8Array, o: { close?: boolean } = {}): Promise<void> {
    await this.sb.t.send("stdinProcess", { path: { id: this.sb.id, pid: this.pid }, query: { close: o.close }, body: data });
  }
  async kill(signal = "KILL"): Promise<void> {
    await this.sb.t.send("signalProcess", { path: { id: this.sb.id, pid: this.pid }, json: { signal } });
  }
  /** Wait for the exit without the output (wait() streams it): exit code, limit, durability and generation. */
  async waitExit(): Promise<CommandResult> {
    const r = await this.sb.t.json<Record<string, any>>("waitProcess", { path: { id: this.sb.id, pid: this.pid } });
    const enc = new TextEncoder();
    return commandResult(r, enc.encode(r.stdout ?? ""), enc.encode(r.stderr ?? ""));
  }
  /** The process as the server lists it (running, and its result once it exited). */
  info(): Promise<ProcessInfo> {
    return this.sb.t.json("getProcess", { path: { id: this.sb.id, pid: this.pid } });
  }
}

class Commands {
  constructor(private readonly sb: Sandbox) {}
  run(cmd: string, o: RunOptions & { background: true }): Promise<CommandHandle>;
  run(cmd: string, o?: RunOptions & { background?: false }): Promise<CommandResult>;
  async run(cmd: string, o: RunOptions & { background?: boolean } = {}): Promise<CommandResult | CommandHandle> {
    const body = execBody(cmd, o);
    if (o.background) {
      const p = await this.sb.t.json<{ pid: number }>("startProcess", { path: { id: this.sb.id }, json: body });
      return new CommandHandle(this.sb, p.pid);
    }
    return this.sb.t.stream("exec", { path: { id: this.sb.id }, json: body, signal: o.signal }, o.onStdout, o.onStderr);
  }
  list(): Promise<ProcessInfo[]> {
    return this.sb.t.json("listProcesses", { path: { id: this.sb.id } });
  }
  connect(pid: number): CommandHandle {
    return new CommandHandle(this.sb, pid);
  }
}

export interface ProcessInfo {
  pid: number;
  session: string;
  command: string;
  running: boolean;
  started_at: string;
  /** For a background job of a session: its job number (%N) and the pid the shell gave it ($!). */
  job?: number;
  shell_pid?: number;
  /** Set for a process on a terminal. */
  pty?: { cols: number; rows: number };
  /** Once it exited: its exec result as the server sends it (exit, limit, durability, generation, ...). */
  result?: Record<string, unknown>;
}

export interface PtySize {
  cols: number;
  rows: number;
}

export interface PtyCreateOptions extends PtySize {
  /** The terminal's display output (with \r\n line ends and escape sequences). */
  onData?: (data: Uint8Array) => void;
  /** A command to run on the terminal instead of an interactive shell. */
  cmd?: string;
  cwd?: string;
  envs?: Record<string, string>;
  /** The shell session (default: one of its own). */
  session?: string;
  /** The time limit of each command line on the terminal (default: the sandbox's exec timeout; at most 24 h). */
  timeoutMs?: number;
}

/** A process on a terminal: an interactive shell unless created with cmd. */
export class PtyHandle {
  private readonly output: Promise<CommandResult>;
  /** @internal */
  constructor(private readonly sb: Sandbox, readonly pid: number, onData?: (data: Uint8Array) => void) {
    this.output = sb.t.bytes("attachProcess", { path: { id: sb.id, pid } }, onData);
    this.output.catch(() => {}); // surfaced by wait()
  }
  /** Keyboard input ("\x03" is ^C, "\x04" ^D, "\r" Enter). */
  sendInput(data: string | Uint8Array): Promise<void> {
    return this.sb.pty.sendInput(this.pid, data);
  }
  resize(size: PtySize): Promise<void> {
    return this.sb.pty.resize(this.pid, size);
  }
  /** Hang up (SIGHUP), or send another signal. */
  kill(signal = "HUP"): Promise<void> {
    return this.sb.pty.kill(this.pid, signal);
  }
  /** Resolves when the shell exits: exitCode is its status; stdout the whole display. */
  wait(): Promise<CommandResult> {
    return this.output;
  }
}

class Pty {
  constructor(private readonly sb: Sandbox) {}
  async create(o: PtyCreateOptions): Promise<PtyHandle> {
    const body: Record<string, unknown> = o.cmd ? execBody(o.cmd, o) : {};
    if (!o.cmd) {
      if (o.cwd) body.cwd = o.cwd;
      if (o.envs) body.env = o.envs;
      if (o.session) body.session = o.session;
    }
    if (o.timeoutMs !== undefined) body.timeout = `${Math.round(o.timeoutMs)}ms`;
    body.pty = { cols: o.cols, rows: o.rows };
    const p = await this.sb.t.json<{ pid: number }>("startProcess", { path: { id: this.sb.id }, json: body });
    return new PtyHandle(this.sb, p.pid, o.onData);
  }
  /** Follow the terminal of a running process (its buffered output is replayed first). */
  connect(pid: number, o: { onData?: (data: Uint8Array) => void } = {}): PtyHandle {
    return new PtyHandle(this.sb, pid, o.onData);
  }
  async sendInput(pid: number, data: string | Uint8Array): Promise<void> {
    await this.sb.t.send("stdinProcess", { path: { id: this.sb.id, pid }, body: data });
  }
  async resize(pid: number, size: PtySize): Promise<void> {
    await this.sb.t.send("resizeProcess", { path: { id: this.sb.id, pid }, json: { cols: size.cols, rows: size.rows } });
  }
  async kill(pid: number, signal = "HUP"): Promise<void> {
    await this.sb.t.send("signalProcess", { path: { id: this.sb.id, pid }, json: { signal } });
  }
}

export interface EntryInfo {
  path: string;
  name: string;
  type: "file" | "dir" | "symlink" | "other";
  size: number;
  mode: string;
  mod_time: string;
  target?: string;
}

/** A file event; name is relative to the watched directory. */
export interface WatchEvent {
  type: "create" | "write" | "remove" | "rename" | "chmod" | "overflow" | "closed";
  name?: string;
  /** rename: the old name. */
  old_name?: string;
  file_type?: "file" | "dir" | "symlink" | "other";
  /** overflow: how many events were lost. */
  dropped?: number;
  /** closed: hibernated, deleted, removed (the watched directory) or shutdown. */
  reason?: string;
}

/** A running watch: stop() ends it; done resolves with the closing event (or undefined after stop). */
export interface WatchHandle {
  stop(): void;
  done: Promise<WatchEvent | undefined>;
}

class Files {
  constructor(private readonly sb: Sandbox) {}
  /**
   * Watch a directory: onEvent gets every create, write, remove, rename and
   * chmod under it (direct children unless recursive) until stop(), or a
   * closed event (hibernate, delete). Resolves once the watch is live.
   */
  async watch(path: string, onEvent: (e: WatchEvent) => void, o: { recursive?: boolean } = {}): Promise<WatchHandle> {
    const ac = new AbortController();
    const resp = await this.sb.t.send("watchFiles", { path: { id: this.sb.id }, query: { path, recursive: o.recursive }, signal: ac.signal });
    if (!resp.body) throw new UnavailableError("the watch response has no body");
    const rd = resp.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    let ready!: () => void;
    let failed!: (e: unknown) => void;
    const live = new Promise<void>((res, rej) => ((ready = res), (failed = rej)));
    const done = (async (): Promise<WatchEvent | undefined> => {
      try {
        for (;;) {
          const { value, done } = await rd.read();
          if (done) throw new UnavailableError("the watch stream ended without a closed event (connection lost)");
          buf += decoder.decode(value, { stream: true });
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (!line.trim()) continue;
            const ev = JSON.parse(line);
            if (ev.type === "ready") {
              ready();
              continue;
            }
            onEvent(ev);
            if (ev.type === "closed") {
              await rd.cancel().catch(() => {});
              return ev;
            }
          }
        }
      } catch (e) {
        failed(e);
        if (ac.signal.aborted) return undefined;
        throw e;
      }
    })();
    done.catch(() => {});
    await live;
    return { stop: () => ac.abort(), done };
  }
  read(path: string, o: { format: "bytes"; offset?: number; length?: number }): Promise<Uint8Array>;
  read(path: string, o?: { format?: "text"; offset?: number; length?: number }): Promise<string>;
  async read(path: string, o: { format?: "text" | "bytes"; offset?: number; length?: number } = {}): Promise<string | Uint8Array> {
    const fmt = o.format ?? "text";
    if (fmt !== "text" && fmt !== "bytes") throw new InvalidArgumentError(`format ${JSON.stringify(fmt)}: want "text" or "bytes"`);
    const resp = await this.sb.t.send("getFiles", { path: { id: this.sb.id }, query: { path, offset: o.offset || undefined, length: o.length || undefined } });
    const data = new Uint8Array(await resp.arrayBuffer());
    return fmt === "bytes" ? data : new TextDecoder().decode(data);
  }
  /**
   * Write a file atomically (or append). durability (default the
   * sandbox's) is how far the write must go before this resolves; the
   * WriteInfo says what it reached. Over the sandbox's uncommitted budget
   * it rejects with WriteBudgetError (retry after its retryAfterMs).
   */
  async write(path: string, data: string | Uint8Array, o: { append?: boolean; mode?: number; durability?: Durability } = {}): Promise<WriteInfo> {
    checkDurability(o.durability);
    const query = { path, mode: o.append ? "append" : "truncate", perm: o.mode === undefined ? undefined : o.mode.toString(8), durability: o.durability };
    const resp = await this.sb.t.send("putFiles", { path: { id: this.sb.id }, query, body: data });
    const gen = resp.headers.get("Warren-Generation") ?? "";
    return { path, durability: (resp.headers.get("Warren-Durability") ?? "") as Durability | "", generation: /^\d+$/.test(gen) ? Number(gen) : 0 };
  }
  list(path: string, o: { depth?: number; recursive?: boolean } = {}): Promise<EntryInfo[]> {
    return this.sb.t.json("getFiles", { path: { id: this.sb.id }, query: { path, list: true, depth: o.depth || undefined, recursive: o.recursive } });
  }
  stat(path: string): Promise<EntryInfo> {
    return this.sb.t.json("getFiles", { path: { id: this.sb.id }, query: { path, stat: true } });
  }
  async exists(path: string): Promise<boolean> {
    try {
      await this.stat(path);
      return true;
    } catch (e) {
      if (e instanceof NotFoundError) return false;
      throw e;
    }
  }
  async remove(path: string, o: { recursive?: boolean } = {}): Promise<void> {
    await this.sb.t.send("deleteFiles", { path: { id: this.sb.id }, query: { path, recursive: o.recursive } });
  }
  async rename(from: string, to: string): Promise<void> {
    await this.sb.t.send("move", { path: { id: this.sb.id }, json: { from, to } });
  }
  async makeDir(path: string): Promise<void> {
    await this.sb.t.send("mkdir", { path: { id: this.sb.id }, json: { path } });
  }
  async uploadTar(dir: string, tar: Uint8Array): Promise<void> {
    await this.sb.t.send("putFiles", { path: { id: this.sb.id }, query: { path: dir, format: "tar" }, body: tar, contentType: "application/x-tar" });
  }
  async downloadTar(dir: string): Promise<Uint8Array> {
    const resp = await this.sb.t.send("getFiles", { path: { id: this.sb.id }, query: { path: dir, format: "tar" } });
    return new Uint8Array(await resp.arrayBuffer());
  }
}

/** What a file write reached: the level and, for committed, the generation holding it. */
export interface WriteInfo {
  path: string;
  durability: Durability | "";
  generation: number;
}

/**
 * A sandbox's egress policy: default deny; entries are names
 * ("api.example.com"), suffixes ("*.example.com"), addresses or CIDRs, each
 * optionally ":PORT", or "*". Deny wins.
 */
export interface NetworkPolicy {
  allow?: string[];
  deny?: string[];
}

/**
 * A credential the sandbox never sees: its env var `name` holds a
 * placeholder, which the egress layer replaces with `value` only on
 * requests over TLS to `hosts` (headers and query; the body too with
 * `body`). Kept in the server's memory only.
 */
export interface Secret {
  name: string;
  value: string;
  hosts: string[];
  body?: boolean;
}

/** A secret as the API shows it: the placeholder, never the value. */
export interface SecretInfo {
  name: string;
  placeholder: string;
  hosts: string[];
}

/** One egress decision of the sandbox's audit list. */
export interface NetworkDecision {
  time: string;
  host: string;
  port: number;
  /** The address dialed (allowed decisions). */
  addr: string;
  allowed: boolean;
  reason: string;
}

/** The policy, the secrets, the last decisions (oldest first, at most 256) and how many were made in all. */
export interface NetworkStatus {
  policy: { allow: string[]; deny: string[] };
  secrets: SecretInfo[];
  audit: NetworkDecision[];
  decisions: number;
}

function networkStatus(d: Record<string, any>): NetworkStatus {
  return {
    policy: { allow: d.policy?.allow ?? [], deny: d.policy?.deny ?? [] },
    secrets: (d.secrets ?? []).map((s: SecretInfo) => ({ name: s.name, placeholder: s.placeholder, hosts: s.hosts ?? [] })),
    audit: (d.audit ?? []).map((a: NetworkDecision) => ({ ...a, addr: a.addr ?? "" })),
    decisions: d.decisions ?? 0,
  };
}

function policyBody(p: NetworkPolicy): Record<string, string[]> {
  const unknown = Object.keys(p).filter((k) => k !== "allow" && k !== "deny");
  if (unknown.length) throw new InvalidArgumentError(`network ${unknown.join(", ")}: a policy has only allow and deny`);
  const body: Record<string, string[]> = {};
  if (p.allow?.length) body.allow = [...p.allow];
  if (p.deny?.length) body.deny = [...p.deny];
  return body;
}

/** The sandbox's egress: policy, secrets and audit list. */
class Network {
  constructor(private readonly sb: Sandbox) {}
  /** The policy, the secrets (names and placeholders, never values) and the last decisions. */
  async get(): Promise<NetworkStatus> {
    return networkStatus(await this.sb.t.json("getNetwork", { path: { id: this.sb.id } }));
  }
  /**
   * Replace the policy (the next request sees it; no allow list denies
   * everything). `secrets`, when given, replace the secrets; absent keeps them.
   */
  async set(o: NetworkPolicy & { secrets?: Secret[] } = {}): Promise<NetworkStatus> {
    const { secrets, ...policy } = o;
    const body: Record<string, unknown> = policyBody(policy);
    if (secrets !== undefined) body.secrets = secrets;
    return networkStatus(await this.sb.t.json("setNetwork", { path: { id: this.sb.id }, json: body }));
  }
  /** The last egress decisions, oldest first (at most 256). */
  async audit(): Promise<NetworkDecision[]> {
    return (await this.get()).audit;
  }
}

/**
 * A committed, retained generation of a sandbox; pass it as
 * `fromGeneration` to create a sandbox from it. pinned_by names what keeps
 * it past its retention ("snapshot:NAME", "sandbox:ID").
 */
export interface Generation {
  sandbox: string;
  number: number;
  created_at: string;
  epoch: number;
  head: boolean;
  pinned_by: string[];
}

/** Which generations stay besides the head and the pinned ones (server defaults: 10, one hour). */
export interface Retention {
  keepLast?: number;
  /** Keep those younger than this; negative: none by age. */
  keepForMs?: number;
}

/** Durable storage of the tenant that outlives any sandbox. size is its quota in bytes. */
export interface Volume {
  name: string;
  size: number;
  used: number;
  /** The sandbox holding it read-write (absent: none). */
  attached_to?: string;
  /** Sandboxes holding it read-only. */
  readers?: string[];
  generation: number;
  created_at: string;
}

/** Attaches a volume at create: {name, path, readOnly} or "NAME:/path[:ro]". */
export type VolumeMount = { name: string; path: string; readOnly?: boolean } | string;

function volumeMountBody(v: VolumeMount, what = "volume"): Record<string, unknown> {
  let m: { name: string; path: string; readOnly?: boolean };
  if (typeof v === "string") {
    const parts = v.split(":");
    if (parts.length < 2 || parts.length > 3 || !parts[0] || !parts[1].startsWith("/") || (parts.length === 3 && parts[2] !== "ro" && parts[2] !== "rw")) {
      throw new InvalidArgumentError(`${what} ${JSON.stringify(v)}: want NAME:/path or NAME:/path:ro`);
    }
    m = { name: parts[0], path: parts[1], readOnly: parts[2] === "ro" };
  } else if (v && typeof v.name === "string" && typeof v.path === "string" && v.path.startsWith("/")) {
    m = v;
  } else {
    throw new InvalidArgumentError(`${what} ${JSON.stringify(v)}: want an absolute path ("/...") or NAME:/path[:ro]`);
  }
  const body: Record<string, unknown> = { name: m.name, path: m.path };
  if (m.readOnly) body.read_only = true;
  return body;
}

/** A shared drive: many sandboxes mount it read-write at once (close-to-open). size is its quota (0: none). */
export interface Drive {
  name: string;
  size: number;
  used: number;
  created_at: string;
}

/** A drive mounted in a sandbox (as the server reports it). */
export interface DriveMountInfo {
  drive: string;
  path: string;
  read_only?: boolean;
}

/** Mounts a drive at create: {drive, path, readOnly} or "NAME:/path[:ro]". */
export type DriveMount = { drive: string; path: string; readOnly?: boolean } | string;

function driveMountBody(d: DriveMount): Record<string, unknown> {
  const v = volumeMountBody(typeof d === "string" ? d : { name: d?.drive, path: d?.path, readOnly: d?.readOnly }, "drive");
  const body: Record<string, unknown> = { drive: v.name, path: v.path };
  if (v.read_only) body.read_only = true;
  return body;
}

/** Bytes from a number or a string with a binary unit ("10G", "512MiB"). */
export function sizeBytes(size: number | string): number {
  let n: number;
  if (typeof size === "number") {
    n = size;
  } else {
    const m = /^\s*(\d+)\s*([KMGT]?)(i?B)?\s*$/i.exec(String(size));
    if (!m) throw new InvalidArgumentError(`size ${JSON.stringify(size)}: want bytes or a number with K, M, G or T`);
    n = Number(m[1]) * 1024 ** " KMGT".indexOf((m[2] || " ").toUpperCase());
  }
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError(`size ${JSON.stringify(size)}: want a whole number of bytes more than 0`);
  return n;
}

export interface SandboxInfo {
  id: string;
  state: string;
  image: string;
  labels?: Record<string, string>;
  env?: Record<string, string>;
  cwd: string;
  parent?: string;
  snapshot?: string;
  created_at: string;
  [k: string]: unknown;
}

export interface CreateOptions extends ConnectionOptions {
  image?: string;
  snapshot?: string;
  envs?: Record<string, string>;
  cwd?: string;
  labels?: Record<string, string>;
  limits?: Record<string, unknown>;
  ttlMs?: number;
  /** Egress policy (default: no network at all). */
  network?: NetworkPolicy;
  /** Credentials the sandbox sees only as placeholders in its env. */
  secrets?: Secret[];
  /** The sandbox's default ack level for execs and file writes (default the server's). */
  durability?: Durability;
  /** Start from this retained generation (a Generation, or {sandbox, generation}). */
  fromGeneration?: Generation | { sandbox: string; generation: number };
  retention?: Retention;
  /** Idle time before standby (negative: never). */
  standbyAfterMs?: number;
  /** Let the idle timer put the sandbox in standby while background jobs run (standby ends them). */
  standbyWithJobs?: boolean;
  user?: string;
  hostname?: string;
  /** Native tier confinement: "default" or "relaxed" (trusted images). */
  security?: "default" | "relaxed";
  /** Commands policy: "resident-first" (default), "native-first", "resident-only", plus NAME=WHERE overrides. */
  commands?: string;
  /** Place on a fleet node carrying these labels. */
  nodeSelector?: Record<string, string>;
  /** Volumes to attach (one read-write holder each; read-only ones may be shared). */
  volumes?: VolumeMount[];
  /** Shared drives to mount (any number of sandboxes at once). */
  drives?: DriveMount[];
}

function createBody(o: CreateOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (o.image) body.image = o.image;
  if (o.snapshot) body.snapshot = o.snapshot;
  if (o.envs) body.env = o.envs;
  if (o.cwd) body.cwd = o.cwd;
  if (o.labels) body.labels = o.labels;
  if (o.limits) body.limits = o.limits;
  if (o.ttlMs) body.ttl = `${Math.round(o.ttlMs)}ms`;
  if (o.standbyAfterMs !== undefined) body.standby_after = `${Math.round(o.standbyAfterMs)}ms`;
  if (o.standbyWithJobs) body.standby_with_jobs = true;
  if (o.user) body.user = o.user;
  if (o.hostname) body.hostname = o.hostname;
  if (o.security) body.security = o.security;
  if (o.commands) body.commands = o.commands;
  if (o.nodeSelector) body.node_selector = o.nodeSelector;
  checkDurability(o.durability);
  if (o.durability) body.durability = o.durability;
  if (o.network) body.network = policyBody(o.network);
  if (o.secrets?.length) body.secrets = o.secrets;
  if (o.fromGeneration) {
    const g = o.fromGeneration;
    const n = "number" in g ? g.number : g.generation;
    if (typeof g.sandbox !== "string" || !Number.isInteger(n)) {
      throw new InvalidArgumentError(`fromGeneration ${JSON.stringify(g)}: want a Generation or {sandbox, generation}`);
    }
    body.from_generation = { sandbox: g.sandbox, generation: n };
  }
  if (o.retention) {
    const r: Record<string, unknown> = {};
    if (o.retention.keepLast !== undefined) r.keep_last = o.retention.keepLast;
    if (o.retention.keepForMs !== undefined) r.keep_for = `${Math.round(o.retention.keepForMs)}ms`;
    body.retention = r;
  }
  if (o.volumes?.length) body.volumes = o.volumes.map((v) => volumeMountBody(v));
  if (o.drives?.length) body.drives = o.drives.map((d) => driveMountBody(d));
  return body;
}

export interface Snapshot {
  name: string;
  sandbox: string;
  image: string;
  state_ref: string;
  created_at: string;
}

export class Sandbox {
  readonly commands: Commands;
  readonly files: Files;
  /** Terminals: pty.create({cols, rows, onData}), sendInput, resize, kill. */
  readonly pty: Pty;
  /** Egress: network.get(), network.set({allow, deny, secrets}), network.audit(). */
  readonly network: Network;
  readonly id: string;
  /** @internal */
  constructor(public info: SandboxInfo, readonly t: Transport) {
    this.id = info.id;
    this.commands = new Commands(this);
    this.files = new Files(this);
    this.pty = new Pty(this);
    this.network = new Network(this);
  }

  /**
   * Create a sandbox. `network: {allow, deny}` lets it out (default: no
   * network); `secrets` put placeholders in its env that only their hosts
   * see replaced; `durability` is its default ack level; `fromGeneration`
   * starts it from a retained generation; `retention` says which of its
   * generations stay.
   */
  static async create(o: CreateOptions = {}): Promise<Sandbox> {
    const t = new Transport(o);
    return new Sandbox(await t.json<SandboxInfo>("create", { json: createBody(o) }), t);
  }

  static async connect(id: string, o: ConnectionOptions = {}): Promise<Sandbox> {
    const t = new Transport(o);
    return new Sandbox(await t.json<SandboxInfo>("get", { path: { id } }), t);
  }

  static async list(o: ConnectionOptions & { labels?: Record<string, string> } = {}): Promise<Sandbox[]> {
    const t = new Transport(o);
    const query = Object.entries(o.labels ?? {}).map(([k, v]) => ["label", `${k}=${v}`] as [string, string]);
    return (await t.json<SandboxInfo[]>("list", { query })).map((i) => new Sandbox(i, t));
  }

  async refresh(): Promise<SandboxInfo> {
    this.info = await this.t.json<SandboxInfo>("get", { path: { id: this.id } });
    return this.info;
  }
  async hibernate(): Promise<void> {
    this.info = await this.t.json<SandboxInfo>("hibernate", { path: { id: this.id } });
  }
  async resume(): Promise<void> {
    this.info = await this.t.json<SandboxInfo>("resume", { path: { id: this.id } });
  }
  async fork(count = 1, o: { labels?: Record<string, string> } = {}): Promise<Sandbox[]> {
    const r = await this.t.json<{ sandboxes: SandboxInfo[] }>("fork", { path: { id: this.id }, json: { count, labels: o.labels } });
    return r.sandboxes.map((i) => new Sandbox(i, this.t));
  }
  /** A named snapshot. Of a sandbox in standby it is its head generation, which the snapshot then pins. */
  snapshot(name: string): Promise<Snapshot> {
    return this.t.json<Snapshot>("createSnapshot", { path: { id: this.id }, json: { name } });
  }
  /** The committed generations its retention keeps, oldest first. */
  async generations(): Promise<Generation[]> {
    const gens = await this.t.json<Omit<Generation, "sandbox">[]>("listGenerations", { path: { id: this.id } });
    return gens.map((g) => ({ sandbox: this.id, number: g.number, created_at: g.created_at, epoch: g.epoch, head: !!g.head, pinned_by: g.pinned_by ?? [] }));
  }
  /** Mount a shared drive at path (now if running, at resume in standby); the mount list. */
  async mount(drive: string, path: string, o: { readOnly?: boolean } = {}): Promise<DriveMountInfo[]> {
    return this.t.json("mountDrive", { path: { id: this.id }, json: driveMountBody({ drive, path, readOnly: o.readOnly }) });
  }
  /** Unmount the drive at path (files still open there lose what they had not closed). */
  unmount(path: string): Promise<DriveMountInfo[]> {
    return this.t.json("unmountDrive", { path: { id: this.id }, query: { path } });
  }
  mounts(): Promise<DriveMountInfo[]> {
    return this.t.json("listMounts", { path: { id: this.id } });
  }
  /** Delete the sandbox and its files. */
  async kill(): Promise<void> {
    await this.t.send("delete", { path: { id: this.id } });
  }
}

/** Tenant-wide calls that are not about one sandbox. */
export class Client {
  private readonly t: Transport;
  constructor(o: ConnectionOptions = {}) {
    this.t = new Transport(o);
  }
  async health(): Promise<boolean> {
    return (await this.t.json<{ status: string }>("health")).status === "ok";
  }
  async createKey(tenant: string): Promise<string> {
    return (await this.t.json<{ key: string }>("createKey", { json: { tenant } })).key;
  }
  listSnapshots(): Promise<Snapshot[]> {
    return this.t.json("listSnapshots");
  }
  getSnapshot(name: string): Promise<Snapshot> {
    return this.t.json("getSnapshot", { path: { name } });
  }
  async deleteSnapshot(name: string): Promise<void> {
    await this.t.send("deleteSnapshot", { path: { name } });
  }
  listImages(): Promise<{ name: string; digest: string }[]> {
    return this.t.json("listImages");
  }
  buildImage(name: string, tar: Uint8Array): Promise<{ name: string; digest: string }> {
    return this.t.json("buildImage", { query: { name }, body: tar, contentType: "application/x-tar" });
  }
  /** Remove one of the tenant's images (refused while a sandbox uses it). */
  async deleteImage(name: string): Promise<void> {
    await this.t.send("deleteImage", { path: { name } });
  }
  /** A volume of size bytes (a number, or "10G"-style binary units). */
  createVolume(name: string, size: number | string): Promise<Volume> {
    return this.t.json("createVolume", { json: { name, size: sizeBytes(size) } });
  }
  listVolumes(): Promise<Volume[]> {
    return this.t.json("listVolumes");
  }
  getVolume(name: string): Promise<Volume> {
    return this.t.json("getVolume", { path: { name } });
  }
  /** Grow a volume (a smaller size is refused: InvalidArgumentError). */
  resizeVolume(name: string, size: number | string): Promise<Volume> {
    return this.t.json("resizeVolume", { path: { name }, json: { size: sizeBytes(size) } });
  }
  /** Delete a volume and its data (refused while a sandbox holds it: ConflictError). */
  async deleteVolume(name: string): Promise<void> {
    await this.t.send("deleteVolume", { path: { name } });
  }
  /** A shared drive with an optional quota (a number of bytes or "10G"). */
  createDrive(name: string, size?: number | string): Promise<Drive> {
    const json: Record<string, unknown> = { name };
    if (size !== undefined) json.size = sizeBytes(size);
    return this.t.json("createDrive", { json });
  }
  listDrives(): Promise<Drive[]> {
    return this.t.json("listDrives");
  }
  getDrive(name: string): Promise<Drive> {
    return this.t.json("getDrive", { path: { name } });
  }
  /** Delete a drive and its files (refused while mounted: ConflictError). */
  async deleteDrive(name: string): Promise<void> {
    await this.t.send("deleteDrive", { path: { name } });
  }
}
