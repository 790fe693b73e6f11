#!/usr/bin/env bash
# Vendors xterm.js for the console's terminal: fetches the pinned npm
# tarballs, checks them against their pinned integrity (npm's sha512),
# and writes the files the console serves into console/static/vendor/,
# with SHA256SUMS naming the versions. The output is committed, so a
# Go-only checkout builds; TestVendor checks it matches these pins.
# Needs npm (registry access) and sha256sum/sha512sum.
set -euo pipefail
cd "$(dirname "$0")"

XTERM_VERSION=6.0.0
XTERM_INTEGRITY=sha512-TQwDdQGtwwDt+2cgKDLn0IRaSxYu1tSUjgKarSDkUM0ZNiSRXFpjxEsvc/Zgc5kq5omJ+V0a8/kIM2WD3sMOYg==
FIT_VERSION=0.11.0
FIT_INTEGRITY=sha512-jYcgT6xtVYhnhgxh3QgYDnnNMYTcf8ElbxxFzX0IZo+vabQqSPAjC3c1wJrKB5E19VwQei89QCiZZP86DCPF7g==

out=static/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetch() { # name version integrity dir
  local tgz
  tgz=$(cd "$tmp" && npm pack --silent "$1@$2")
  local got="sha512-$(sha512sum "$tmp/$tgz" | cut -d' ' -f1 | xxd -r -p | base64 -w0)"
  if [ "$got" != "$3" ]; then
    echo "vendor.sh: $1@$2 has integrity $got, pinned $3" >&2
    exit 1
  fi
  mkdir -p "$tmp/$4"
  tar xzf "$tmp/$tgz" -C "$tmp/$4"
}
fetch @xterm/xterm "$XTERM_VERSION" "$XTERM_INTEGRITY" xterm
fetch @xterm/addon-fit "$FIT_VERSION" "$FIT_INTEGRITY" fit

mkdir -p "$out"
rm -f "$out"/*
# The source maps are not shipped: drop the comments that name them.
sed '/^\/\/# sourceMappingURL=/d' "$tmp/xterm/package/lib/xterm.mjs" >"$out/xterm.mjs"
sed '/^\/\/# sourceMappingURL=/d' "$tmp/fit/package/lib/addon-fit.mjs" >"$out/addon-fit.mjs"
cp "$tmp/xterm/package/css/xterm.css" "$out/xterm.css"
cp "$tmp/xterm/package/LICENSE" "$out/LICENSE.xterm"
cp "$tmp/fit/package/LICENSE" "$out/LICENSE.addon-fit"
{
  echo "# @xterm/xterm $XTERM_VERSION @xterm/addon-fit $FIT_VERSION (console/vendor.sh)"
  (cd "$out" && sha256sum addon-fit.mjs xterm.css xterm.mjs LICENSE.addon-fit LICENSE.xterm)
} >"$out/SHA256SUMS.tmp"
mv "$out/SHA256SUMS.tmp" "$out/SHA256SUMS"
echo "vendored @xterm/xterm $XTERM_VERSION and @xterm/addon-fit $FIT_VERSION into console/$out"
