#!/usr/bin/env python3
"""Run bash 5.2's tests/ groups in real bash and in warren; report per group."""
import os, subprocess, sys, difflib, re, shutil, concurrent.futures as cf
T = os.environ["BASH_TESTS"]
W = os.environ["WARREN"]
out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/bt/res"
os.makedirs(out, exist_ok=True)
groups = []
for f in sorted(os.listdir(T)):
    if not f.startswith("run-") or f in ("run-all", "run-minimal"):
        continue
    src = open(os.path.join(T, f)).read()
    m = re.search(r"\$\{THIS_SH\} \./(\S+\.tests)", src)
    r = re.search(r"diff \$\{BASH_TSTOUT\} (\S+\.right)", src)
    if m and r and "|" not in src.split("\n")[0]:
        groups.append((f[4:], m.group(1), r.group(1)))
def real(g):
    name, tests, right = g
    try:
        p = subprocess.run(["bash", "-c", f"cd {T} && export PATH=.:$PATH THIS_SH=/bin/bash && bash ./{tests} 2>&1"], capture_output=True, timeout=60)
        return p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None
def warren(g):
    name, tests, right = g
    try:
        p = subprocess.run([W, "run", "--timeout", "60s", "--copy-in", T + ":/t", "--cwd", "/t", "-c",
                            f"export PATH=.:$PATH THIS_SH=bash; bash ./{tests} 2>&1"], capture_output=True, timeout=90)
        return p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None
def one(g):
    name, tests, right = g
    want = open(os.path.join(T, right), encoding="utf-8", errors="replace").read()
    rb = real(g)
    if rb is None or rb != want:
        return name, "bash-fails", 0
    wo = warren(g) or ""
    open(os.path.join(out, name + ".warren"), "w").write(wo)
    sim = difflib.SequenceMatcher(None, want.splitlines(), wo.splitlines(), autojunk=False).ratio()
    return name, "match" if wo == want else "diff", sim
with cf.ThreadPoolExecutor(int(os.environ.get("JOBS", "2"))) as ex:
    res = list(ex.map(one, groups))
ok = [r for r in res if r[1] != "bash-fails"]
for r in sorted(res, key=lambda r: r[2]):
    print("%-14s %-10s %.3f" % r)
sims = sorted(r[2] for r in ok)
print("groups bash passes: %d, warren matches exactly: %d, median similarity %.3f, mean %.3f" % (
    len(ok), sum(r[1] == "match" for r in ok), sims[len(sims)//2] if sims else 0, sum(sims)/max(len(sims),1)))
