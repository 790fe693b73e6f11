#!/usr/bin/env bash
# Runs bash 5.2's own regression suite (tests/ of Debian's bash_5.2.15
# source, fetched once) in real bash and in warren, and prints per group
# the line similarity of warren's output to the .right file, counting only
# the groups real bash passes on this machine. Material nobody wrote for
# warren: use it to find divergences, fix them from the bash manual.
#   conformance/bashsuite/run.sh [OUTDIR]     (about 3 minutes on 2 cores)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${BASH_SUITE_CACHE:-$HOME/.cache/warren-bashsuite}
src=$cache/bash-5.2.15
if [ ! -d "$src/tests" ]; then
	mkdir -p "$cache"
	curl -sSfL -o "$cache/bash.tar.gz" http://deb.debian.org/debian/pool/main/b/bash/bash_5.2.15.orig.tar.gz
	tar -xzf "$cache/bash.tar.gz" -C "$cache"
fi
# the suite's C helpers (support/recho.c, zecho.c, printenv.c, xcase.c) as
# scripts both shells run alike
for f in recho zecho printenv xcase; do
	install -m 755 "$here/$f.sh" "$src/tests/$f"
done
warren=${WARREN:-$cache/warren}
(cd "$root" && go build -o "$warren" ./cmd/warren)
BASH_TESTS=$src/tests WARREN=$warren python3 "$here/compare.py" "${1:-$cache/out}"
