#!/usr/bin/env bash
# Runs every test warren has, on a fresh machine of this kind (Go, gcc, apt).
# It installs what the tests need, checks formatting and vet, then runs the
# race-enabled test suite. Any failure fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests use. Install only what is missing, so a warm
# machine skips apt entirely.
need_pkgs=()
need() { dpkg -s "$1" >/dev/null 2>&1 || need_pkgs+=("$1"); }
for p in $(sed -e 's/#.*//' scripts/test-packages.txt); do need "$p"; done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "test.sh: installing ${need_pkgs[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
  else
    echo "test.sh: missing packages ${need_pkgs[*]} (run as root to install them)" >&2
  fi
fi

# Go-installed test servers (store/s3/s3test finds versitygw on PATH or in
# GOPATH/bin; in CI a missing one fails the S3 tests).
export PATH="$PATH:$(go env GOPATH)/bin"
command -v versitygw >/dev/null || go install github.com/versity/versitygw/cmd/versitygw@v1.8.0

echo "== gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi

echo "== go vet"
go vet ./...

echo "== go test -race"
# -race on the whole tree; long-running suites scale themselves down under
# -short, which CI does not set.
go test -race -count=1 -timeout 40m ./... 2>&1 | tee /tmp/warren-test.log

echo "== WASM tier without -race (Go wasip1 and Ruby modules compile for minutes under it)"
# ruby.wasm from npm, pinned, installed once into a cache the tests find.
ruby_wasm=/var/cache/warren-test/ruby-wasm
if [ ! -f "$ruby_wasm/node_modules/@ruby/3.4-wasm-wasi/dist/ruby+stdlib.wasm" ]; then
  if command -v npm >/dev/null; then npm install --silent --prefix "$ruby_wasm" @ruby/3.4-wasm-wasi@2.10.1
  else echo "test.sh: npm is missing: the Ruby tests cannot get ruby.wasm" >&2; fi
fi
go test -count=1 -run 'TestGoWasip1|TestRuby|TestImageAddRuby' ./wasm/ ./cmd/warren/

echo "== beyond RAM at full size without -race (2 GiB through versitygw three times; the -race run above has the slice)"
WARREN_BEYONDRAM=full go test -count=1 -timeout 20m -run 'TestE2E_BeyondRAM' ./cmd/warren/

echo "== fuzz (a bounded slice of each target; scripts/fuzz.sh runs the campaign)"
FUZZTIME=${FUZZTIME:-10s} ./scripts/fuzz.sh

echo "== SDK tests"
./scripts/test-sdks.sh
