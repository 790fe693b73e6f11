#!/usr/bin/env bash
# Runs the Python and TypeScript SDKs' tests against a real `warren serve`
# built from this checkout. Called by scripts/test.sh; runs on its own too.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(mktemp -d)/warren
go build -o "$bin" ./cmd/warren
export WARREN_BIN=$bin

# The network tests' HTTPS upstream needs a certificate (openssl); the
# write-budget tests stall a real S3 server (versitygw, as scripts/test.sh
# installs it). In CI a missing one fails those tests.
if ! command -v openssl >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssl >/dev/null
fi
export PATH="$PATH:$(go env GOPATH)/bin"
command -v versitygw >/dev/null || go install github.com/versity/versitygw/cmd/versitygw@v1.8.0

echo "== python SDK (pytest)"
# Debian's interpreter: the SDK's test dependencies are Debian packages,
# which a pyenv or venv python on PATH would not see.
(cd sdk/python && /usr/bin/python3 -m pytest -q -p no:cacheprovider)

echo "== typescript SDK (tsc + node --test)"
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  else
    echo "test-sdks.sh: node and npm are missing (run as root to install them)" >&2
    exit 1
  fi
fi
(cd sdk/typescript && npm ci --no-audit --no-fund --loglevel=error && npm test)
