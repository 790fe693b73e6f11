// sandboxes.js: the Sandboxes page: a table of the tenant's sandboxes,
// filtered and sorted in the page, refreshed by polling, with the actions
// on each row.

import * as api from "./api.js";
import { h, clear, bytes, ago, age, banner, errText, ask } from "./dom.js";

const POLL_MS = 2000;

// shortImage keeps a digest readable: sha256: and the first 12 digits.
export function shortImage(img) {
  const m = /^(sha256:[0-9a-f]{12})[0-9a-f]{52}$/.exec(img || "");
  return m ? m[1] + "…" : img;
}

const columns = [
  { key: "id", label: "ID", value: (s) => s.id },
  { key: "image", label: "Image", value: (s) => s.image, show: (s) => shortImage(s.image) },
  { key: "state", label: "State", value: (s) => s.state },
  { key: "age", label: "Age", value: (s) => -Date.parse(s.created_at), show: (s) => age(s.created_at) },
  { key: "active", label: "Last activity", value: (s) => -Date.parse(s.last_active), show: (s) => ago(s.last_active) },
  { key: "disk", label: "Disk", value: (s) => s.disk_bytes || 0, show: (s) => (s.state === "running" ? bytes(s.disk_bytes) : "—") },
];

// busy disables a button while its action runs, then reports failure.
async function busy(btn, fn) {
  btn.disabled = true;
  try { await fn(); } catch (e) { banner(errText(e)); } finally { btn.disabled = false; }
}

export function render(main) {
  let list = [];
  let sort = { key: "age", dir: 1 };
  let timer = 0, stopped = false;

  const filter = h("input", { id: "filter", type: "search", placeholder: "Filter by id, image, state", "aria-label": "Filter sandboxes", oninput: draw });
  const imageSel = h("select", { id: "create-image", "aria-label": "Image" }, h("option", { value: "" }, "default image"));
  const memory = h("input", { id: "create-memory", type: "number", min: "0", step: "1", placeholder: "MiB", class: "narrow", "aria-label": "Memory limit in MiB" });
  const disk = h("input", { id: "create-disk", type: "number", min: "0", step: "1", placeholder: "MiB", class: "narrow", "aria-label": "Disk limit in MiB" });
  const createBtn = h("button", { type: "submit", class: "primary", id: "create" }, "Create sandbox");
  const createForm = h("form", { class: "row wrap", id: "create-form" },
    h("label", {}, "Image ", imageSel), h("label", {}, "Memory ", memory), h("label", {}, "Disk ", disk), createBtn);
  createForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    busy(createBtn, async () => {
      const req = { limits: {} };
      if (imageSel.value) req.image = imageSel.value;
      if (memory.value) req.limits.max_memory_bytes = Number(memory.value) * 1048576;
      if (disk.value) req.limits.disk_bytes = Number(disk.value) * 1048576;
      const sb = await api.create(req);
      banner(`Created ${sb.id}.`, "notice");
      await refresh();
    });
  });

  const count = h("span", { class: "muted", id: "count", "aria-live": "polite" });
  const thead = h("thead");
  const tbody = h("tbody", { id: "sandbox-rows" });
  const table = h("table", { class: "list", id: "sandboxes" }, thead, tbody);
  main.append(
    h("div", { class: "row between wrap" }, h("h1", {}, "Sandboxes"), count),
    h("section", { class: "card" }, createForm),
    h("div", { class: "row" }, filter),
    h("div", { class: "scroll" }, table),
  );

  function header() {
    clear(thead).append(h("tr", {}, columns.map((c) => {
      const dir = sort.key === c.key ? (sort.dir > 0 ? "ascending" : "descending") : "none";
      return h("th", { scope: "col", "aria-sort": dir },
        h("button", { type: "button", class: "sort", dataset: { sort: c.key }, onclick: () => {
          sort = { key: c.key, dir: sort.key === c.key ? -sort.dir : 1 };
          header();
          thead.querySelector(`button[data-sort="${c.key}"]`).focus();
          draw();
        } },
          c.label, sort.key === c.key ? (sort.dir > 0 ? " ▲" : " ▼") : ""));
    }), h("th", { scope: "col" }, "Actions")));
  }

  function row(s) {
    const act = (label, fn, cls) => h("button", { type: "button", class: cls || "", dataset: { action: label.toLowerCase(), id: s.id }, onclick: (ev) => busy(ev.currentTarget, fn) }, label);
    const actions = [
      act("Fork", async () => { const r = await api.fork(s.id); banner(`Forked ${s.id} into ${r.sandboxes.map((x) => x.id).join(", ")}.`, "notice"); await refresh(); }),
      act("Snapshot", async () => {
        const name = await ask(`Snapshot ${s.id} as:`, { label: "Name", value: s.id + "-" + new Date().toISOString().slice(11, 19).replace(/:/g, ""), ok: "Snapshot" });
        if (!name) return;
        await api.snapshot(s.id, name);
        banner(`Snapshot ${name} created.`, "notice");
      }),
      s.state === "standby" ? act("Resume", async () => { await api.resume(s.id); await refresh(); }) : act("Hibernate", async () => { await api.hibernate(s.id); await refresh(); }),
      act("Delete", async () => {
        if (!(await ask(`Delete sandbox ${s.id}? Its files are gone for good.`, { ok: "Delete", danger: true }))) return;
        await api.remove(s.id);
        await refresh();
      }, "danger"),
    ];
    return h("tr", { dataset: { id: s.id, state: s.state } },
      columns.map((c) => h("td", { dataset: { col: c.key } },
        c.key === "id" ? h("a", { href: "#/sandbox/" + encodeURIComponent(s.id) }, s.id)
          : c.key === "state" ? h("span", { class: "state " + s.state }, s.state)
            : (c.show || c.value)(s))),
      h("td", { class: "actions" }, h("div", { class: "acts" }, actions)));
  }

  // rows keeps each sandbox's <tr> across refreshes, rebuilt only when
  // what its actions depend on changes: a poll must not replace the
  // button under a user's pointer or focus.
  const rows = new Map(); // id -> {sig, tr}
  function draw() {
    const q = filter.value.trim().toLowerCase();
    const col = columns.find((c) => c.key === sort.key);
    const shown = list.filter((s) => !q || [s.id, s.image, s.state].some((v) => (v || "").toLowerCase().includes(q)));
    shown.sort((a, b) => {
      const x = col.value(a), y = col.value(b);
      return (x < y ? -1 : x > y ? 1 : 0) * sort.dir || (a.id < b.id ? -1 : 1);
    });
    const ids = new Set(list.map((s) => s.id));
    for (const id of rows.keys()) if (!ids.has(id)) rows.delete(id);
    const want = shown.map((s) => {
      const sig = JSON.stringify([s.state, s.image]);
      let r = rows.get(s.id);
      if (!r || r.sig !== sig) {
        r = { sig, tr: row(s) };
        rows.set(s.id, r);
      } else {
        for (const c of columns) if (c.show) r.tr.querySelector(`td[data-col="${c.key}"]`).textContent = c.show(s);
      }
      return r.tr;
    });
    if (!shown.length) {
      tbody.replaceChildren(h("tr", {}, h("td", { colspan: columns.length + 1, class: "muted" }, list.length ? "No sandbox matches the filter." : "No sandboxes yet: create one above.")));
    } else if (tbody.children.length !== want.length || want.some((tr, i) => tbody.children[i] !== tr)) {
      tbody.replaceChildren(...want);
    }
    count.textContent = `${shown.length} of ${list.length}`;
  }

  async function refresh() {
    try {
      list = await api.sandboxes();
      if (stopped) return;
      table.dataset.loaded = "true";
      draw();
    } catch (e) {
      if (!stopped && e.status !== 401) banner("Cannot list sandboxes: " + errText(e));
    }
  }

  async function poll() {
    await refresh();
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  }

  api.images().then((imgs) => {
    for (const i of imgs || []) imageSel.append(h("option", { value: i.name }, i.name));
  }).catch((e) => banner("Cannot list images: " + errText(e)));
  header();
  draw();
  poll();
  return () => { stopped = true; clearTimeout(timer); };
}
