// exec.js: the exec box: run a script in the sandbox's default session
// and show stdout, stderr and the exit code as they stream in.

import * as api from "./api.js";
import { h, clear, errText } from "./dom.js";

export class ExecBox {
  constructor(id, signal) {
    this.id = id;
    this.signal = signal;
    this.script = h("textarea", { id: "exec-script", rows: "3", spellcheck: "false", autocomplete: "off", "aria-label": "Command to run", placeholder: "echo hello; ls -la" });
    this.run = h("button", { type: "submit", class: "primary", id: "exec-run" }, "Run");
    this.stop = h("button", { type: "button", id: "exec-stop", hidden: true, onclick: () => this.ctl && this.ctl.abort() }, "Stop");
    this.status = h("span", { class: "muted", id: "exec-status", "aria-live": "polite" });
    this.out = h("pre", { class: "output", id: "exec-output", tabindex: "0", "aria-label": "Command output" });
    const form = h("form", { id: "exec-form" }, this.script, h("div", { class: "row" }, this.run, this.stop, this.status, h("span", { class: "muted hint" }, "Ctrl+Enter runs")));
    form.addEventListener("submit", (ev) => { ev.preventDefault(); this.exec(); });
    this.script.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); this.exec(); }
    });
    this.el = h("section", { class: "card", "aria-labelledby": "exec-h" }, h("h2", { id: "exec-h" }, "Run a command"), form, this.out);
  }

  async exec() {
    const script = this.script.value;
    if (!script.trim() || this.run.disabled) return;
    this.run.disabled = true;
    this.stop.hidden = false;
    this.ctl = new AbortController();
    clear(this.out).append(h("span", { class: "muted" }, "$ " + script + "\n"));
    this.status.textContent = "running…";
    delete this.out.dataset.exit;
    try {
      await api.exec(this.id, script, (ev) => {
        if (ev.stdout !== undefined) this.out.append(h("span", { class: "stdout" }, ev.stdout));
        if (ev.stderr !== undefined) this.out.append(h("span", { class: "stderr" }, ev.stderr));
        if (ev.stdout_b64 || ev.stderr_b64) this.out.append(h("span", { class: "muted" }, "[binary output]"));
        if (ev.exit !== undefined) {
          this.out.dataset.exit = ev.exit;
          let s = `exit ${ev.exit}`;
          if (ev.duration_ms !== undefined) s += ` · ${ev.duration_ms.toFixed(1)} ms`;
          if (ev.limit) s += ` · ${ev.limit} limit exceeded`;
          if (ev.truncated) s += " · output truncated";
          this.status.textContent = s;
        }
        if (ev.error) {
          this.out.append(h("span", { class: "stderr" }, `\n[error: ${ev.error.message}]`));
          this.status.textContent = "failed";
        }
      }, AbortSignal.any([this.ctl.signal, this.signal]));
    } catch (e) {
      if (e.name === "AbortError") this.status.textContent = "stopped";
      else { this.out.append(h("span", { class: "stderr" }, errText(e))); this.status.textContent = "failed"; }
    } finally {
      this.run.disabled = false;
      this.stop.hidden = true;
      this.out.scrollTop = this.out.scrollHeight;
    }
  }
}
