#!/usr/bin/env python3
"""Run BusyBox's testsuite/ per applet with the host's GNU tools and in
warren; per applet, count the cases GNU passes and how many of those warren
passes. Outputs (VERBOSE diffs included) go to OUTDIR/APPLET.{gnu,warren}."""
import os, re, shutil, subprocess, sys, tempfile, concurrent.futures as cf

TS = os.environ["BUSYBOX_TESTS"]
W = os.environ["WARREN"]
here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
only = sys.argv[2:]
os.makedirs(out, exist_ok=True)
# Not tests of an applet's behaviour (the busybox binary, its sources, the
# line editor), or ones that mount, make device nodes or start daemons on
# the host as root.
SKIP = {"all_sourcecode", "busybox", "ash", "mount", "mdev", "makedevs",
        "mkfs.minix", "start-stop-daemon"}
names = set()
for f in os.listdir(TS):
    p = os.path.join(TS, f)
    if f.endswith(".tests"):
        names.add(f[:-6])
    elif os.path.isdir(p):
        names.add(f)
applets = sorted(n for n in names - SKIP if not only or n in only)

# The suite as both sides run it: testing.sh's optional() keeps every case
# (it skips all of them without a .config; GNU passing decides what counts),
# a busybox shim that runs "busybox APPLET ARGS" as APPLET ARGS.
tmpl = os.path.join(out, "template")
shutil.rmtree(tmpl, ignore_errors=True)
shutil.copytree(TS, tmpl, symlinks=True)
with open(os.path.join(tmpl, "testing.sh"), "a") as f:
    f.write("\n# busyboxsuite: every optional feature is on\noptional() { SKIP=; }\n")
os.makedirs(os.path.join(tmpl, ".bin"))
shutil.copy2(os.path.join(here, "busybox"), os.path.join(tmpl, ".bin", "busybox"))
shutil.copy2(os.path.join(here, "suite.sh"), os.path.join(tmpl, ".suite.sh"))

# awk is GNU's (gawk) on the host side when installed: Debian's default
# awk is mawk.
gnubin = os.path.join(out, "gnubin")
shutil.rmtree(gnubin, ignore_errors=True)
os.makedirs(gnubin)
if shutil.which("gawk"):
    os.symlink(shutil.which("gawk"), os.path.join(gnubin, "awk"))

ENV = {"LC_ALL": "C.UTF-8", "TZ": "UTC", "bindir": "/nonexistent-bindir", "VERBOSE": "1"}
TIMEOUT = int(os.environ.get("TIMEOUT", "180"))
CASE = re.compile(r"^(PASS|FAIL|SKIPPED): (.*)$", re.M)

def gnu(applet):
    d = tempfile.mkdtemp(prefix="bb-gnu-")
    try:
        w = os.path.join(d, "t")
        shutil.copytree(tmpl, w, symlinks=True)
        env = dict(ENV, PATH=gnubin + ":" + w + "/.bin:/usr/local/bin:/usr/bin:/bin", HOME=d)
        try:
            p = subprocess.run(["bash", ".suite.sh", applet], cwd=w, env=env,
                               capture_output=True, timeout=TIMEOUT)
            return p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired as e:
            return (e.stdout or b"").decode("utf-8", "replace"), "timeout\n"
    finally:
        shutil.rmtree(d, ignore_errors=True)

def warren(applet):
    cmd = [W, "run", "--commands", "resident-only", "--no-native", "--timeout", "%ds" % TIMEOUT,
           "--copy-in", tmpl + ":/t", "--cwd", "/t", "--env", "PATH=/t/.bin:/usr/local/bin:/usr/bin:/bin",
           "--env", "HOME=/root"]
    for k, v in ENV.items():
        cmd += ["--env", "%s=%s" % (k, v)]
    cmd += ["-c", "bash .suite.sh " + applet]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT + 30)
        return p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        return (e.stdout or b"").decode("utf-8", "replace"), "timeout\n"

def cases(text):
    seen, res = {}, {}
    for st, name in CASE.findall(text):
        n = seen[name] = seen.get(name, 0) + 1
        res[(name, n)] = st
    return res

def one(applet):
    go, ge = gnu(applet)
    wo, we = warren(applet)
    for side, o, e in (("gnu", go, ge), ("warren", wo, we)):
        with open(os.path.join(out, applet + "." + side), "w") as f:
            f.write(o + ("\n--- stderr\n" + e if e else ""))
    g, w = cases(go), cases(wo)
    passed = [k for k, st in g.items() if st == "PASS"]
    failed = [k for k in passed if w.get(k) != "PASS"]
    return applet, len(g), len(passed), len(passed) - len(failed), failed

with cf.ThreadPoolExecutor(int(os.environ.get("JOBS", os.cpu_count() or 2))) as ex:
    res = list(ex.map(one, applets))
G = M = 0
with open(os.path.join(out, "failures.txt"), "w") as f:
    for applet, n, g, m, failed in res:
        G, M = G + g, M + m
        if g:
            print("%-12s cases %3d  GNU passes %3d  warren passes %3d" % (applet, n, g, m))
        for name, i in failed:
            f.write("%s: %s%s\n" % (applet, name, " (#%d)" % i if i > 1 else ""))
print("GNU passes %d, warren passes %d (%.2f)" % (G, M, M / G if G else 0))
