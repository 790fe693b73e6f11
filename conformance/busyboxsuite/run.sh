#!/usr/bin/env bash
# Runs BusyBox 1.35.0's own testsuite/ (Debian's orig tarball, fetched
# once) per applet with the host's GNU tools and inside warren, and prints
# per applet the cases GNU passes and how many of those warren passes.
# Material nobody wrote for warren: use it to find divergences, fix them
# from GNU's behaviour, never from the test files.
#   conformance/busyboxsuite/run.sh [OUTDIR [APPLET...]]   (a few minutes)
# OUTDIR/APPLET.{gnu,warren} hold each side's output with diffs of failing
# cases; OUTDIR/failures.txt lists the cases only GNU passes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${BUSYBOX_SUITE_CACHE:-$HOME/.cache/warren-busyboxsuite}
src=$cache/busybox-1.35.0
if [ ! -d "$src/testsuite" ]; then
	mkdir -p "$cache"
	curl -sSfL -o "$cache/busybox.tar.bz2" http://deb.debian.org/debian/pool/main/b/busybox/busybox_1.35.0.orig.tar.bz2
	tar -xjf "$cache/busybox.tar.bz2" -C "$cache"
fi
warren=${WARREN:-$cache/warren}
(cd "$root" && go build -o "$warren" ./cmd/warren)
out=${1:-$cache/out}
[ $# -gt 0 ] && shift
BUSYBOX_TESTS=$src/testsuite WARREN=$warren python3 "$here/compare.py" "$out" "$@"
