package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestParseCacheASTUnchanged: cached ASTs are shared by every sandbox of
// the process, so running a script must leave its AST exactly as parsed.
func TestParseCacheASTUnchanged(t *testing.T) {
	scripts := []string{
		`x=a/b/c; echo ${x////-} ${x//\//c} ${x/#a/z} ${x%%/*}; declare -A m=([k]=v); m[j]+=w; echo ${!m[@]}`,
		`f() { local -x a=1 "b=$1" c+=2; export d=$a e; declare -i n=1+1; typeset g[2]=z; echo $a $b $n; }; f q; f r`,
		"shopt -s expand_aliases; alias ll='echo ll'\nll one; ll two;" + ` w='v=1'; declare $w "k=$w"; echo $v`,
		"sleep 0.01 & wait; (echo sub) | cat; cat <<EOF\nhere $((1+2))\nEOF\ncat <<< \"str\"; a=(1 2 3); a+=(4); echo ${a[@]:1:2} ${#a[@]}",
		`case abc in a*) echo m;; esac; for i in 1 2; do echo $i; done; i=0; while ((i<2)); do ((i++)); done; [[ ab =~ (a)b ]] && echo ${BASH_REMATCH[1]}`,
		`echo 5 > /tmp/c; x=$(cat /tmp/c) echo $(( $(cat /tmp/c) + 1 )) > /tmp/c; export y=$(cat /tmp/c) > /tmp/c; cat <(echo p) ; trap 'echo t' EXIT`,
	}
	print := func(stmts []*syntax.Stmt) string {
		var b strings.Builder
		p := syntax.NewPrinter()
		for _, st := range stmts {
			if err := p.Print(&b, st); err != nil {
				t.Fatal(err)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	for _, src := range scripts {
		sh := newTestShell(t, Limits{})
		stmts, _, _, err := sh.parseCached(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		before := print(stmts)
		for range 2 {
			runScript(t, sh, src)
		}
		again, _, _, _ := sh.parseCached(src)
		if len(again) != len(stmts) || (len(again) > 0 && again[0] != stmts[0]) {
			t.Errorf("%s: not served from the cache", src)
		}
		if after := print(stmts); after != before {
			t.Errorf("running modified the cached AST:\nbefore %s\nafter  %s", before, after)
		}
	}
}

// TestParseCacheBounded: the cache holds at most parseCacheEntries scripts
// and parseCacheBytes of source; longer scripts are not cached.
func TestParseCacheBounded(t *testing.T) {
	sh := newTestShell(t, Limits{})
	big := "echo " + strings.Repeat("x", parseCacheMaxSrc)
	if _, _, _, err := sh.parseCached(big); err != nil {
		t.Fatal(err)
	}
	globalParseCache.mu.Lock()
	_, cached := globalParseCache.m[big]
	globalParseCache.mu.Unlock()
	if cached {
		t.Error("a script longer than parseCacheMaxSrc was cached")
	}
	line := "echo " + strings.Repeat("y", 2000) + " "
	for i := range 3 * parseCacheEntries {
		src := line + strings.Repeat("z", i%7) + string(rune('a'+i%26)) + strings.Repeat("q", i/26)
		if _, _, _, err := sh.parseCached(src); err != nil {
			t.Fatal(err)
		}
		globalParseCache.mu.Lock()
		n, b := len(globalParseCache.m), globalParseCache.bytes
		globalParseCache.mu.Unlock()
		if n > parseCacheEntries || b > parseCacheBytes {
			t.Fatalf("cache holds %d entries, %d bytes", n, b)
		}
	}
}
