#!/usr/bin/env bash
# A longer fuzzing campaign for the shell's untrusted-input front doors:
# each target runs for FUZZTIME (default 10m). CI runs a bounded slice of
# each instead:
#   go test -run='^$' -fuzz='^FuzzParse$' -fuzztime=20s ./shell
#   go test -run='^$' -fuzz='^FuzzArith$' -fuzztime=20s ./shell
#   go test -run='^$' -fuzz='^FuzzPattern$' -fuzztime=20s ./shell
# New crashers land in shell/testdata/fuzz/<target>/: commit them with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-10m}
for target in FuzzParse FuzzArith FuzzPattern FuzzRun; do
  echo "== $target ($FUZZTIME)"
  go test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" ./shell
done
