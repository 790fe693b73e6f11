#!/usr/bin/env bash
# fleet-up.sh N: a local warren fleet to try (docs/fleet.md): a throwaway
# PostgreSQL (unix socket), versitygw (S3) on a loopback port and N
# `warren serve` nodes on 127.0.0.1:7711.. sharing them. Ctrl-C stops it all.
#
# Needs: Debian's postgresql, versitygw (go install
# github.com/versity/versitygw/cmd/versitygw@v1.8.0), Go to build warren.
# Run as root (initdb runs as the postgres user).
set -euo pipefail
n=${1:-3}
if ! [[ $n =~ ^[1-9][0-9]?$ ]]; then
	echo "usage: $0 N  (1-99 nodes)" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -n "$pgbin" ] || { echo "fleet-up: PostgreSQL is not installed (apt-get install -y postgresql)" >&2; exit 1; }
gw=$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")
[ -x "$gw" ] || { echo "fleet-up: versitygw is not installed (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)" >&2; exit 1; }

work=$(mktemp -d /tmp/warren-fleet.XXXXXX)
chmod a+x "$work"
pids=()
cleanup() {
	trap - EXIT INT TERM
	echo "fleet-up: stopping"
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait "${pids[@]}" 2>/dev/null || true
	runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/db" -m fast stop >/dev/null 2>&1 || true
	echo "fleet-up: logs and data left in $work"
}
trap cleanup EXIT INT TERM

echo "fleet-up: building warren"
(cd "$here" && go build -o "$work/warren" ./cmd/warren)

mkdir "$work/pg" && chown postgres "$work/pg"
runuser -u postgres -- "$pgbin/initdb" -D "$work/pg/db" -U postgres -A trust >/dev/null
runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/pg/db" -w -l "$work/pg/log" \
	-o "-c listen_addresses='' -k $work/pg -c fsync=off" start >/dev/null
meta="postgres://postgres@/postgres?host=$work/pg&sslmode=disable"

export AWS_ACCESS_KEY_ID=fleetkey AWS_SECRET_ACCESS_KEY=fleetsecret
mkdir -p "$work/s3/warren"
"$gw" --access "$AWS_ACCESS_KEY_ID" --secret "$AWS_SECRET_ACCESS_KEY" --port 127.0.0.1:7070 posix "$work/s3" >"$work/s3.log" 2>&1 &
pids+=($!)
sleep 1

for i in $(seq 0 $((n - 1))); do
	port=$((7711 + i))
	WARREN_ADMIN_KEY=${WARREN_ADMIN_KEY:-wk_fleet-up-admin-key-0000000000000000} \
		"$work/warren" serve --no-native --addr 127.0.0.1:$port --data "$work/node$i" \
		--meta "$meta" --blobs s3://warren/fleet --s3-endpoint http://127.0.0.1:7070 --s3-path-style \
		--node-id node$i --node-label name=node$i --lease 4s >"$work/node$i.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do
		grep -q "admin key file" "$work/node$i.log" && break
		sleep 0.2
	done
	grep -q "admin key file" "$work/node$i.log" || { echo "fleet-up: node$i did not start:" >&2; tail "$work/node$i.log" >&2; exit 1; }
	echo "fleet-up: node$i on http://127.0.0.1:$port"
done
cat <<EOT

fleet-up: $n nodes up. Try:
  export WARREN_SERVER=http://127.0.0.1:7711 WARREN_API_KEY=${WARREN_ADMIN_KEY:-wk_fleet-up-admin-key-0000000000000000}
  $work/warren node ls
  $work/warren sandbox create                  # placed on the least loaded of two nodes
  WARREN_SERVER=http://127.0.0.1:7712 $work/warren sandbox exec ID -- echo hi   # any node serves it
  kill -9 <a node's pid> and watch another take its sandboxes over
Ctrl-C stops everything.
EOT
wait
