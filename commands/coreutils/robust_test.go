package coreutils_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// Untrusted scripts are the normal case: no command may panic or hang on
// odd arguments or input, and every failure must say something on stderr.
func TestNoPanicOnOddInput(t *testing.T) {
	tab := table()
	argSets := [][]string{
		{}, {"-"}, {"--"}, {"-Z"}, {"--nope"}, {"--he"}, {""}, {"nonexistent"}, {"-n"}, {"-n", "-1"},
		{"-k", "0"}, {"-k", "1.0"}, {"-t", ""}, {"-d", ""}, {"-f", "0"}, {"-c", "9-1"}, {"-w", "0"},
		{"["}, {"\\"}, {"a\\{99999\\}"}, {"*"}, {"\\("}, {"\\)"}, {"(", "x"}, {"s/"}, {"s/a/b/q"}, {"y/ab/c/"},
		{"{"}, {"}"}, {"b x"}, {"0p"}, {"1~0p"}, {"$!N;D"}, {"-E", "(|a)*"}, {"-P", "(?<n>x)\\k<n>"},
		{".[", "x"}, {"--arg"}, {"--argjson", "a", "{"}, {"-i", "5-1"}, {"-s", "0"}, {"%"}, {"%*.*d", "-5", "-5", "3"},
		{"%-+ #0'10.3q", "a b"}, {"1", "0", "5"}, {"-A", "-1", "x"}, {"substr", "a", "x", "1"}, {"(", "(", ")"},
		{"BEGIN { while (1) {} }"},
	}
	inputs := []string{"\x00\xff\xfe\n", "a\nb\n\nno newline"}
	if !testing.Short() {
		inputs = append(inputs, "", strings.Repeat("x", 70000)+"\n")
	}
	for _, name := range tab.Names() {
		for _, args := range argSets {
			for _, in := range inputs {
				argv := append([]string{name}, args...)
				label := fmt.Sprintf("%q <%d bytes>", argv, len(in))
				func() {
					ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
					defer cancel()
					defer func() {
						if p := recover(); p != nil {
							t.Errorf("%s panicked: %v", label, p)
						}
					}()
					files := cmdtest.NewFiles(map[string]string{"f": "1\n2\n"})
					var out, errb strings.Builder
					done := make(chan int, 1)
					go func() {
						defer func() {
							if p := recover(); p != nil {
								t.Errorf("%s panicked: %v", label, p)
								done <- -1
							}
						}()
						w := &limited{w: &out, n: 1 << 20}
						done <- tab[name](ctx, files.Invocation(argv, strings.NewReader(in), w, &errb))
					}()
					select {
					case code := <-done:
						if code > 0 && errb.Len() == 0 && !silentFailure(name, argv) && out.Len() < 1<<20 {
							t.Errorf("%s failed with %d and no diagnostic", label, code)
						}
					case <-time.After(10 * time.Second):
						t.Errorf("%s did not return after its context expired", label)
					}
				}()
			}
		}
	}
}

// silentFailure lists commands whose non-zero status carries no message by
// design (a false result, not an error).
func silentFailure(name string, argv []string) bool {
	switch name {
	case "grep", "egrep", "fgrep", "expr", "cmp", "diff", "test", "sort", "jq", "awk", "gawk", "mawk", "nawk", "uniq", "comm", "sed":
		return true
	}
	return false
}

type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, io.ErrShortWrite
	}
	l.n -= len(p)
	return l.w.Write(p)
}
