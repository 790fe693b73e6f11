// files.js: the file browser: list a directory, view text (editable when
// small), hex or images, upload (button or drop), download, rename,
// delete.

import * as api from "./api.js";
import { h, clear, bytes, ago, banner, errText, ask } from "./dom.js";

// EDIT_MAX is the largest file the editor opens; VIEW_MAX the most bytes
// read for a view (the rest is downloadable).
const EDIT_MAX = 1 << 20;
const VIEW_MAX = 256 << 10;
const IMAGE = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp" };

function join(dir, name) { return (dir.endsWith("/") ? dir : dir + "/") + name; }
function parent(p) { const i = p.replace(/\/+$/, "").lastIndexOf("/"); return i <= 0 ? "/" : p.slice(0, i); }

function isText(b) {
  if (b.includes(0)) return false;
  try { new TextDecoder("utf-8", { fatal: true }).decode(b); return true; } catch (_) { return false; }
}

function hex(b) {
  const lines = [];
  for (let i = 0; i < b.length && i < 4096; i += 16) {
    const row = b.subarray(i, i + 16);
    const hx = Array.from(row, (x) => x.toString(16).padStart(2, "0")).join(" ");
    const asc = Array.from(row, (x) => (x >= 32 && x < 127 ? String.fromCharCode(x) : ".")).join("");
    lines.push(i.toString(16).padStart(8, "0") + "  " + hx.padEnd(48) + "  " + asc);
  }
  return lines.join("\n");
}

export class FileBrowser {
  constructor(id, signal) {
    this.id = id;
    this.signal = signal;
    this.dir = "/";
    this.path = h("input", { id: "files-path", type: "text", "aria-label": "Directory", spellcheck: "false", autocomplete: "off" });
    const go = h("form", { class: "row grow" },
      h("button", { type: "button", id: "files-up", "aria-label": "Parent directory", onclick: () => this.open(parent(this.dir)).catch((e) => banner(errText(e))) }, "↑ Up"),
      this.path, h("button", { type: "submit" }, "Open"));
    go.addEventListener("submit", (ev) => { ev.preventDefault(); this.open(this.path.value).catch((e) => banner(errText(e))); });
    this.upload = h("input", { type: "file", id: "upload", multiple: true, class: "visually-hidden", onchange: () => this.uploadFiles(this.upload.files) });
    const uploadLabel = h("label", { for: "upload", class: "button" }, "Upload…");
    const mkdirBtn = h("button", { type: "button", id: "files-mkdir", onclick: () => this.newDir() }, "New folder");
    const newFile = h("button", { type: "button", id: "files-new", onclick: () => this.newFile() }, "New file");
    this.rows = h("tbody", { id: "file-rows" });
    this.viewer = h("div", { id: "viewer", class: "viewer", hidden: true });
    this.drop = h("div", { class: "drop", id: "drop" }, h("div", { class: "scroll" }, h("table", { class: "list", id: "files" },
      h("thead", {}, h("tr", {}, ["Name", "Size", "Mode", "Modified", ""].map((c) => h("th", { scope: "col" }, c)))), this.rows)),
    h("p", { class: "muted hint" }, "Drop files here to upload them into this directory."));
    this.drop.addEventListener("dragover", (ev) => { ev.preventDefault(); this.drop.classList.add("over"); });
    this.drop.addEventListener("dragleave", () => this.drop.classList.remove("over"));
    this.drop.addEventListener("drop", (ev) => { ev.preventDefault(); this.drop.classList.remove("over"); this.uploadFiles(ev.dataTransfer.files); });
    this.el = h("section", { class: "card", "aria-labelledby": "files-h" }, h("h2", { id: "files-h" }, "Files"),
      h("div", { class: "row wrap" }, go, uploadLabel, this.upload, newFile, mkdirBtn), this.drop, this.viewer);
  }

  async open(dir) {
    dir = dir || "/";
    const list = await api.listFiles(this.id, dir);
    this.dir = dir;
    this.path.value = dir;
    list.sort((a, b) => (a.type === "dir") !== (b.type === "dir") ? (a.type === "dir" ? -1 : 1) : a.name < b.name ? -1 : 1);
    clear(this.rows).append(...list.map((f) => this.row(f)));
    if (!list.length) this.rows.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "Empty directory.")));
    this.rows.dataset.dir = dir;
  }

  row(f) {
    const p = f.path || join(this.dir, f.name);
    const btn = (label, fn, cls) => h("button", { type: "button", class: cls || "", dataset: { action: label.toLowerCase() }, "aria-label": `${label} ${f.name}`, onclick: () => fn().catch((e) => banner(errText(e))) }, label);
    const name = f.type === "dir"
      ? h("button", { type: "button", class: "link", dataset: { open: f.name }, onclick: () => this.open(p).catch((e) => banner(errText(e))) }, f.name + "/")
      : f.type === "file" ? h("button", { type: "button", class: "link", dataset: { open: f.name }, onclick: () => this.view(p, f).catch((e) => banner(errText(e))) }, f.name)
        : h("span", {}, f.name + (f.target ? " → " + f.target : ""));
    return h("tr", { dataset: { name: f.name, type: f.type } },
      h("td", {}, name), h("td", {}, f.type === "dir" ? "—" : bytes(f.size)), h("td", {}, h("code", {}, f.mode)), h("td", {}, ago(f.mod_time)),
      h("td", { class: "actions" }, h("div", { class: "acts" },
        f.type === "file" ? btn("Download", () => this.download(p, f.name)) : null,
        btn("Rename", async () => {
          const to = await ask(`Rename ${p} to:`, { label: "New path", value: p, ok: "Rename" });
          if (!to || to === p) return;
          await api.move(this.id, p, to.startsWith("/") ? to : join(this.dir, to));
          await this.open(this.dir);
        }),
        btn("Delete", async () => {
          if (!(await ask(`Delete ${p}${f.type === "dir" ? " and everything in it" : ""}?`, { ok: "Delete", danger: true }))) return;
          await api.deleteFile(this.id, p);
          if (this.viewer.dataset.path === p) this.viewer.hidden = true;
          await this.open(this.dir);
        }, "danger"))));
  }

  async view(p, f) {
    const data = await api.readFile(this.id, p, Math.min(f.size, f.size <= EDIT_MAX ? EDIT_MAX : VIEW_MAX) || undefined);
    const v = clear(this.viewer);
    v.hidden = false;
    v.dataset.path = p;
    const close = h("button", { type: "button", onclick: () => { v.hidden = true; } }, "Close");
    const ext = (p.split(".").pop() || "").toLowerCase();
    if (IMAGE[ext]) {
      const url = URL.createObjectURL(new Blob([data], { type: IMAGE[ext] }));
      const img = h("img", { src: url, alt: p });
      img.addEventListener("load", () => URL.revokeObjectURL(url), { once: true });
      v.append(h("div", { class: "row between" }, h("h3", {}, p), close), img);
      return;
    }
    if (isText(data) && f.size <= EDIT_MAX) {
      const editor = h("textarea", { id: "editor", rows: "14", spellcheck: "false", "aria-label": "Contents of " + p });
      editor.value = new TextDecoder().decode(data);
      const save = h("button", { type: "button", class: "primary", id: "save" }, "Save");
      const status = h("span", { class: "muted", id: "save-status", "aria-live": "polite" });
      save.addEventListener("click", async () => {
        save.disabled = true;
        try {
          await api.writeFile(this.id, p, new TextEncoder().encode(editor.value));
          status.textContent = "Saved " + new Date().toLocaleTimeString();
          await this.open(this.dir);
        } catch (e) { status.textContent = "Not saved: " + errText(e); } finally { save.disabled = false; }
      });
      editor.addEventListener("keydown", (ev) => { if (ev.key === "s" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); save.click(); } });
      v.append(h("div", { class: "row between" }, h("h3", {}, p), h("div", { class: "row" }, save, status, close)), editor);
      editor.focus();
      return;
    }
    const more = f.size > data.length ? ` (first ${bytes(Math.min(data.length, 4096))} of ${bytes(f.size)}; download for all)` : "";
    v.append(h("div", { class: "row between" }, h("h3", {}, p + more), close), h("pre", { class: "output hex", id: "hex", tabindex: "0" }, hex(data)));
  }

  async download(p, name) {
    // Fetched with the key in the header, then handed to the browser as a
    // blob: a plain link would need the key in the URL.
    const resp = await api.raw("GET", `/v1/sandboxes/${encodeURIComponent(this.id)}/files?path=${encodeURIComponent(p)}`);
    const url = URL.createObjectURL(await resp.blob());
    const a = h("a", { href: url, download: name, class: "visually-hidden" });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  async uploadFiles(list) {
    try {
      for (const file of list) {
        await api.writeFile(this.id, join(this.dir, file.name), file);
        banner(`Uploaded ${file.name} to ${this.dir}.`, "notice");
      }
      await this.open(this.dir);
    } catch (e) {
      banner("Upload failed: " + errText(e));
    } finally {
      this.upload.value = "";
    }
  }

  async newFile() {
    const name = await ask(`New file in ${this.dir}:`, { label: "Name", ok: "Create" });
    if (!name) return;
    const p = name.startsWith("/") ? name : join(this.dir, name);
    try {
      await api.writeFile(this.id, p, new Uint8Array());
      await this.open(this.dir);
      await this.view(p, { size: 0 });
    } catch (e) { banner(errText(e)); }
  }

  async newDir() {
    const name = await ask(`New folder in ${this.dir}:`, { label: "Name", ok: "Create" });
    if (!name) return;
    try {
      await api.mkdir(this.id, name.startsWith("/") ? name : join(this.dir, name));
      await this.open(this.dir);
    } catch (e) { banner(errText(e)); }
  }
}
