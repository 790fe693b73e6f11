#!/usr/bin/env python3
# Records GNU/Debian outputs for the command tests: runs each case of a
# cases.json with the host tools in /tmp/wcase (LC_ALL=C, TZ=UTC, files dated
# 2024-01-02 03:04:05 UTC) and writes gnu.json. Run by hand when adding cases:
#   python3 record.py ../../find/testdata/cases.json ../../find/testdata/gnu.json [CASE NAME...]
# The Go tests only read gnu.json; they never run host tools.
import json, os, subprocess, sys, tempfile, shutil

STAMP = 1704164645  # 2024-01-02 03:04:05 UTC

def run_case(case):
    d = "/tmp/wcase"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    try:
        for p, c in case.get("files", {}).items():
            full = os.path.join(d, p)
            if p.endswith("/"):
                os.makedirs(full, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(c)
        for p, t in case.get("links", {}).items():
            os.symlink(t, os.path.join(d, p))
        for root, dirs, files in os.walk(d, topdown=False):
            for n in files + dirs:
                full = os.path.join(root, n)
                os.utime(full, (STAMP, STAMP), follow_symlinks=False)
        os.utime(d, (STAMP, STAMP))
        out = []
        env = {"LC_ALL": "C", "TZ": "UTC", "PATH": "/usr/bin:/bin", "HOME": "/root"}
        env.update(case.get("env", {}))
        for argv in case["steps"]:
            if argv[0] == "write":
                full = os.path.join(d, argv[1])
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w") as f:
                    f.write(argv[2])
                out.append({"argv": argv, "stdout": "", "stderr": "", "code": 0})
                continue
            r = subprocess.run(argv, cwd=d, env=env, capture_output=True, input=case.get("stdin", "").encode())
            out.append({"argv": argv, "stdout": r.stdout.decode(errors="replace"), "stderr": r.stderr.decode(errors="replace"), "code": r.returncode})
        return out
    finally:
        shutil.rmtree(d)

# Names after the two paths re-record only those cases and keep the other
# recordings (for a host that lacks a tool some other case needs).
cases = json.load(open(sys.argv[1]))
only = set(sys.argv[3:])
kept = {}
if only:
    kept = {c["name"]: c for c in json.load(open(sys.argv[2]))}
res = []
for c in cases:
    if only and c["name"] not in only:
        res.append(kept[c["name"]])
        continue
    c["results"] = run_case(c)
    res.append(c)
json.dump(res, open(sys.argv[2], "w"), indent=1, sort_keys=True)
