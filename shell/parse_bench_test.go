package shell

import (
	"strings"
	"testing"
)

// benchScript is a typical agent script (about 1 KiB): functions, loops,
// expansions, a here-doc, a pipeline.
const benchScript = `set -e
log() { printf '%s %s\n' "$(date +%s)" "$*" >&2; }
files=(/etc/*.conf)
for f in "${files[@]}"; do
  case $f in
    *.conf) n=$((n + 1)); log "conf $f";;
    *) :;;
  esac
  if [[ -s $f && ${f##*/} != resolv.conf ]]; then
    grep -c '^#' "$f" | while read -r c; do total=$((total + c)); done
  fi
done
cat <<EOF > /tmp/report
files: ${#files[@]}
first: ${files[0]:-none}
EOF
declare -A seen=([a]=1 [b]=2)
for k in "${!seen[@]}"; do echo "$k=${seen[$k]}"; done
x=${HOME:-/root}; y=${x//\//_}; echo "${y^^}"
(cd /tmp && ls -la | sort -k5 -n | tail -3) || true
`

// BenchmarkParse is the uncached parse path (scripts over the cache's
// 4 KiB, eval, functions from state): one front-door parse per op.
func BenchmarkParse(b *testing.B) {
	for _, c := range []struct {
		name string
		src  string
	}{
		{"1KiB", benchScript},
		{"64KiB", strings.Repeat(benchScript, 64)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseStmts(c.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEval is eval in a loop: every eval parses its string.
func BenchmarkEval(b *testing.B) {
	benchRun(b, `for i in 1 2 3 4 5 6 7 8 9 10; do eval "x$i=\$i; y=\${x$i}"; done`)
}
