package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// plainLit's fast path must take only words that expand to themselves.
func TestPlainLit(t *testing.T) {
	for _, tc := range []struct {
		word  string
		plain bool
	}{
		{"wc", true}, {"-l", true}, {"/log", true}, {"a=b", true}, {"x:y", true},
		{"~", false}, {"~/x", false}, {"a=~/x", false}, {`a\ b`, false}, {"*.go", false},
		{"a?", false}, {"[ab]", false}, {"x{1,2}", false}, {"@(a|b)", false},
		{"$x", false}, {`"q"`, false}, {"'q'", false}, {"a$x", false},
	} {
		f, err := syntax.NewParser().Parse(strings.NewReader("echo "+tc.word), "")
		if err != nil {
			t.Fatalf("%s: %v", tc.word, err)
		}
		w := f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1]
		s, ok := plainLit(w)
		if ok != tc.plain || (ok && s != tc.word) {
			t.Errorf("plainLit(%s) = %q, %v; want plain %v", tc.word, s, ok, tc.plain)
		}
	}
}
