// sandbox.js: one sandbox: its actions, a terminal, an exec box, a file browser,
// background processes, snapshots and generations.

import * as api from "./api.js";
import { h, clear, bytes, ago, banner, errText, ask } from "./dom.js";
import { ExecBox } from "./exec.js";
import { FileBrowser } from "./files.js";
import { TerminalPane } from "./terminal.js";

const POLL_MS = 3000;

async function busy(btn, fn) {
  btn.disabled = true;
  try { await fn(); } catch (e) { banner(errText(e)); } finally { btn.disabled = false; }
}

export function render(main, { id }) {
  let stopped = false, timer = 0;
  const aborts = new AbortController();
  const title = h("h1", {}, "Sandbox ", h("code", { id: "sandbox-id" }, id));
  const facts = h("dl", { class: "facts", id: "sandbox-facts" });
  const act = (label, fn, cls) => h("button", { type: "button", class: cls || "", dataset: { action: label.toLowerCase() }, onclick: (ev) => busy(ev.currentTarget, fn) }, label);
  const stateBtn = act("Hibernate", async () => {
    info = stateBtn.dataset.action === "resume" ? await api.resume(id) : await api.hibernate(id);
    drawInfo();
  });
  const actions = h("div", { class: "row wrap" },
    stateBtn,
    act("Fork", async () => {
      const r = await api.fork(id);
      banner(`Forked into ${r.sandboxes.map((s) => s.id).join(", ")}.`, "notice");
    }),
    act("Snapshot", async () => {
      const name = await ask(`Snapshot ${id} as:`, { label: "Name", value: id + "-" + new Date().toISOString().slice(11, 19).replace(/:/g, ""), ok: "Snapshot" });
      if (!name) return;
      await api.snapshot(id, name);
      await drawSnapshots();
    }),
    act("Delete", async () => {
      if (!(await ask(`Delete sandbox ${id}? Its files are gone for good.`, { ok: "Delete", danger: true }))) return;
      await api.remove(id);
      location.hash = "#/";
    }, "danger"));

  let info = null;
  function drawInfo() {
    if (!info) return;
    const row = (k, v) => [h("dt", {}, k), h("dd", { dataset: { fact: k.toLowerCase() } }, v)];
    clear(facts).append(...[
      row("State", h("span", { class: "state " + info.state }, info.state)),
      row("Image", info.image),
      row("Created", ago(info.created_at)),
      row("Last activity", ago(info.last_active)),
      row("Disk", info.state === "running" ? `${bytes(info.disk_bytes)}, ${info.disk_inodes} inodes` : "—"),
      info.parent ? row("Forked from", h("a", { href: "#/sandbox/" + encodeURIComponent(info.parent) }, info.parent)) : null,
      info.snapshot ? row("From snapshot", info.snapshot) : null,
    ].flat().filter(Boolean));
    const standby = info.state === "standby";
    stateBtn.textContent = standby ? "Resume" : "Hibernate";
    stateBtn.dataset.action = standby ? "resume" : "hibernate";
  }

  // The terminal opens on demand: a PTY process holds a session of its
  // own until it exits or the page is left.
  const terminal = new TerminalPane(id);

  const exec = new ExecBox(id, aborts.signal);
  const files = new FileBrowser(id, aborts.signal);

  const procRows = h("tbody", { id: "process-rows" });
  const procOut = h("pre", { class: "output", id: "process-output", tabindex: "0", "aria-label": "Process output", "aria-live": "polite" });
  const procScript = h("input", { id: "process-script", type: "text", placeholder: "e.g. sleep 30; echo done", "aria-label": "Background command", autocomplete: "off", spellcheck: "false" });
  const procStart = h("button", { type: "submit", id: "process-start" }, "Start in background");
  const procForm = h("form", { class: "row" }, procScript, procStart);
  let attached = null;
  procForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (!procScript.value.trim()) return;
    busy(procStart, async () => {
      const p = await api.startProcess(id, procScript.value);
      procScript.value = "";
      await drawProcesses();
      show(p.pid);
    });
  });
  async function show(pid) {
    if (attached) attached.abort();
    attached = new AbortController();
    const ctl = attached;
    procOut.dataset.pid = pid;
    clear(procOut).append(h("span", { class: "muted" }, `process ${pid}:\n`));
    try {
      await api.attach(id, pid, (ev) => {
        if (ev.stdout !== undefined) procOut.append(ev.stdout);
        if (ev.stderr !== undefined) procOut.append(h("span", { class: "stderr" }, ev.stderr));
        if (ev.exit !== undefined) procOut.append(h("span", { class: "muted exit" }, `\n[exit ${ev.exit}]`));
        if (ev.error) procOut.append(h("span", { class: "stderr" }, `\n[error: ${ev.error.message}]`));
      }, AbortSignal.any([ctl.signal, aborts.signal]));
      drawProcesses();
    } catch (e) {
      if (e.name !== "AbortError") procOut.append(h("span", { class: "stderr" }, "\n" + errText(e)));
    }
  }
  // procSig is what the table shows: a poll redraws it only when that
  // changes, so a button is not replaced under the pointer.
  let procSig = "", anyRunning = false;
  async function drawProcesses() {
    const ps = await api.processes(id);
    const sig = JSON.stringify(ps.map((p) => [p.pid, p.running, p.result && p.result.exit]));
    anyRunning = ps.some((p) => p.running);
    if (sig === procSig) return;
    procSig = sig;
    clear(procRows).append(...ps.map((p) => h("tr", { dataset: { pid: p.pid } },
      h("td", {}, p.pid), h("td", {}, h("code", {}, p.command)),
      h("td", {}, p.running ? "running" : `exit ${p.result ? p.result.exit : "?"}`), h("td", {}, ago(p.started_at)),
      h("td", { class: "actions" }, h("div", { class: "acts" },
        h("button", { type: "button", dataset: { action: "output" }, onclick: () => show(p.pid) }, "Output"),
        p.running ? h("button", { type: "button", class: "danger", dataset: { action: "kill" }, onclick: (ev) => busy(ev.currentTarget, async () => { await api.signal(id, p.pid, "TERM"); await drawProcesses(); }) }, "Stop") : null)))));
    if (!ps.length) procRows.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No background processes.")));
  }

  const snapRows = h("tbody", { id: "snapshot-rows" });
  async function drawSnapshots() {
    const all = await api.snapshots();
    const mine = all.filter((s) => s.sandbox === id);
    clear(snapRows).append(...mine.map((s) => h("tr", { dataset: { name: s.name } },
      h("td", {}, s.name), h("td", {}, ago(s.created_at)),
      h("td", { class: "actions" }, h("div", { class: "acts" },
        h("button", { type: "button", dataset: { action: "from-snapshot" }, onclick: (ev) => busy(ev.currentTarget, async () => {
          const sb = await api.create({ snapshot: s.name });
          location.hash = "#/sandbox/" + encodeURIComponent(sb.id);
        }) }, "Create from here"),
        h("button", { type: "button", class: "danger", onclick: (ev) => busy(ev.currentTarget, async () => {
          if (!(await ask(`Delete snapshot ${s.name}?`, { ok: "Delete", danger: true }))) return;
          await api.deleteSnapshot(s.name);
          await drawSnapshots();
        }) }, "Delete"))))));
    if (!mine.length) snapRows.append(h("tr", {}, h("td", { colspan: 3, class: "muted" }, "No snapshots of this sandbox.")));
  }

  // Committed generations (a durable node; README "Durability"), newest
  // first, each a place to start a new sandbox from.
  const genRows = h("tbody", { id: "generation-rows" });
  async function drawGenerations() {
    let gens = [];
    try {
      gens = await api.generations(id);
    } catch (e) {
      if (e.status !== 501) throw e; // a node that keeps no generations
    }
    gens.sort((a, b) => b.number - a.number);
    clear(genRows).append(...gens.map((g) => h("tr", { dataset: { generation: String(g.number) } },
      h("td", {}, String(g.number) + (g.head ? " (head)" : "")), h("td", {}, ago(g.created_at)),
      h("td", {}, (g.pinned_by || []).join(", ")),
      h("td", { class: "actions" }, h("div", { class: "acts" },
        h("button", { type: "button", dataset: { action: "from-generation" }, onclick: (ev) => busy(ev.currentTarget, async () => {
          const sb = await api.create({ from_generation: { sandbox: id, generation: g.number } });
          location.hash = "#/sandbox/" + encodeURIComponent(sb.id);
        }) }, "Create from here"))))));
    if (!gens.length) genRows.append(h("tr", {}, h("td", { colspan: 4, class: "muted" }, "No committed generations yet.")));
  }

  main.append(
    h("p", {}, h("a", { href: "#/" }, "← Sandboxes")),
    h("div", { class: "row between wrap" }, title, actions),
    facts,
    terminal.el,
    exec.el,
    files.el,
    h("section", { class: "card", "aria-labelledby": "proc-h" }, h("h2", { id: "proc-h" }, "Background processes"), procForm,
      h("div", { class: "scroll" }, h("table", { class: "list", id: "processes" }, h("thead", {}, h("tr", {}, ["PID", "Command", "Status", "Started", ""].map((c) => h("th", { scope: "col" }, c)))), procRows)),
      procOut),
    h("section", { class: "card", "aria-labelledby": "snap-h" }, h("h2", { id: "snap-h" }, "Snapshots"),
      h("div", { class: "scroll" }, h("table", { class: "list", id: "snapshots" }, h("thead", {}, h("tr", {}, ["Name", "Created", ""].map((c) => h("th", { scope: "col" }, c)))), snapRows))),
    h("section", { class: "card", "aria-labelledby": "gen-h" }, h("h2", { id: "gen-h" }, "Generations"),
      h("div", { class: "row" }, h("button", { type: "button", dataset: { action: "refresh-generations" }, onclick: (ev) => busy(ev.currentTarget, drawGenerations) }, "Refresh")),
      h("div", { class: "scroll" }, h("table", { class: "list", id: "generations" }, h("thead", {}, h("tr", {}, ["Generation", "Committed", "Pinned by", ""].map((c) => h("th", { scope: "col" }, c)))), genRows))),
  );

  async function poll() {
    try {
      info = await api.sandbox(id);
      if (stopped) return;
      drawInfo();
      if (anyRunning) await drawProcesses();
      main.dataset.loaded = "true";
    } catch (e) {
      if (stopped) return;
      if (e.status === 404) { banner(`Sandbox ${id} does not exist (or is not yours).`); stopped = true; return; }
      if (e.status !== 401) banner("Cannot read the sandbox: " + errText(e));
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  }
  // Load the parts once the sandbox is known to exist, so a bad id gives
  // one clear message rather than five.
  (async () => {
    await poll();
    if (stopped) return;
    const report = (what) => (e) => { if (e.name !== "AbortError" && e.status !== 401) banner(`Cannot load ${what}: ${errText(e)}`); };
    files.open(info.cwd || "/").catch(report("files"));
    drawProcesses().catch(report("processes"));
    drawSnapshots().catch(report("snapshots"));
    drawGenerations().catch(report("generations"));
  })();
  return () => { stopped = true; clearTimeout(timer); aborts.abort(); terminal.close(); };
}
