#!/usr/bin/env bash
# bench-peers.sh: warren and its peer, side by side, on this machine, in one go.
#
#   1. warren bench --json                     -> bench/results/DATE-warren.json
#   2. the just-bash harness (node bench.mjs)  -> bench/results/DATE-justbash.json
#   3. node compare.mjs warren just-bash       -> bench/results/DATE-compare.txt
#   (and, unless --quick, warren's density at 10,000 agents -> DATE-warren-density-10k.json,
#    and CPU + allocation profiles of the scenarios far off target -> DATE-profiles.txt)
#
# Usage: scripts/bench-peers.sh [--quick] [--agents N] [--period-ms P] [--seconds D] [--mem-n N] [--scale F]
# The same workload options go to both sides. Environment:
#   WARREN_SHARED  the shared folder (default: ../shared next to the repository)
#   WARREN_BIN     a built warren binary (default: go build ./cmd/warren)
# The peer folder is read-only, so it is copied to a cache directory and
# `npm ci` runs there once (keyed by package-lock.json).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
shared=${WARREN_SHARED:-$repo/../shared}
peer_src=$shared/peers/justbash
compare=$shared/peers/compare.mjs
for f in "$peer_src/bench.mjs" "$peer_src/base-tree.json" "$peer_src/package-lock.json" "$compare"; do
  [ -f "$f" ] || { echo "bench-peers: $f not found (set WARREN_SHARED)" >&2; exit 2; }
done
command -v node >/dev/null || { echo "bench-peers: node is required (Node.js >= 20.18.1)" >&2; exit 2; }

warren_args=() peer_args=() quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; warren_args+=(--quick); peer_args+=(--scale 0.1 --mem-n 200 --agents 200 --seconds 2); shift ;;
    --agents|--period-ms|--seconds|--mem-n|--scale)
      [ $# -ge 2 ] || { echo "bench-peers: $1 needs a value" >&2; exit 2; }
      warren_args+=("$1" "$2"); peer_args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "bench-peers: unknown option $1" >&2; exit 2 ;;
  esac
done

stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
mkdir -p bench/results
out=bench/results/$stamp

# warren: a built binary, so compile time and `go run` overhead stay out
bin=${WARREN_BIN:-}
if [ -z "$bin" ]; then
  bin=$(mktemp -d)/warren
  echo "bench-peers: building $bin" >&2
  go build -o "$bin" ./cmd/warren
fi

# peer: a writable copy with its node_modules, installed once
lock_sum=$(sha256sum "$peer_src/package-lock.json" | cut -c1-16)
peer=${XDG_CACHE_HOME:-$HOME/.cache}/warren/peers/justbash-$lock_sum
mkdir -p "$peer"
cp -f "$peer_src"/bench.mjs "$peer_src"/base-tree.json "$peer_src"/package.json "$peer_src"/package-lock.json "$peer/"
if [ ! -d "$peer/node_modules/just-bash" ]; then
  echo "bench-peers: npm ci in $peer" >&2
  (cd "$peer" && npm ci --no-audit --no-fund >&2)
fi

echo "bench-peers: warren bench --json ${warren_args[*]}" >&2
warren_status=0
"$bin" bench --json --base-tree "$peer_src/base-tree.json" "${warren_args[@]}" > "$out-warren.json" || warren_status=$?

echo "bench-peers: node --expose-gc bench.mjs ${peer_args[*]}" >&2
(cd "$peer" && node --expose-gc bench.mjs "${peer_args[@]}") > "$out-justbash.json"

node "$compare" "$out-warren.json" "$out-justbash.json" | tee "$out-compare.txt"

if [ "$quick" = 0 ]; then
  echo "bench-peers: warren density at 10,000 agents (the issue's target)" >&2
  "$bin" bench --json --base-tree "$peer_src/base-tree.json" --scenario density --agents 10000 --period-ms 1000 --seconds 10 \
    > "$out-warren-density-10k.json" || warren_status=$?
fi

if [ "$quick" = 0 ] && command -v go >/dev/null; then
  echo "bench-peers: profiles -> $out-profiles.txt" >&2
  prof=$(mktemp -d)
  {
    echo "# pprof of warren bench scenarios ($(date -u +%FT%TZ)); CPU and allocation runs are separate"
    echo "# (allocation sampling distorts CPU). Top functions by cumulative / flat cost."
    for sc in create_first_exec exec_pipeline hibernate density; do
      extra=()
      case $sc in
        density) extra=(--agents 2000 --seconds 5) ;;
        create_first_exec|exec_pipeline) extra=(--scale 10) ;;
      esac
      "$bin" bench --scenario "$sc" "${extra[@]}" --cpuprofile "$prof/$sc.cpu" >/dev/null 2>&1 || true
      "$bin" bench --scenario "$sc" "${extra[@]}" --memprofile "$prof/$sc.mem" >/dev/null 2>&1 || true
      echo; echo "## $sc: CPU, flat"
      go tool pprof -top -nodecount=25 "$bin" "$prof/$sc.cpu" 2>/dev/null | sed -n '4,40p'
      echo; echo "## $sc: CPU, cumulative (warren packages)"
      go tool pprof -top -cum -nodecount=40 -hide 'spf13/cobra|^main\.|warren/bench\.|^runtime\.main' -focus 'warren-sandbox/warren/(shell|vfs|commands|sandbox|store|server|client)' "$bin" "$prof/$sc.cpu" 2>/dev/null | sed -n '6,60p'
      echo; echo "## $sc: allocated bytes"
      go tool pprof -sample_index=alloc_space -top -nodecount=20 "$bin" "$prof/$sc.mem" 2>/dev/null | sed -n '4,40p'
    done
  } > "$out-profiles.txt"
  rm -rf "$prof"
fi

echo "bench-peers: saved $out-*" >&2
if [ "$warren_status" != 0 ]; then
  echo "bench-peers: warren bench reported failed scenarios (status $warren_status): see the \"error\" keys in $out-warren.json" >&2
fi
exit "$warren_status"
