package shell

import "testing"

// GLOBIGNORE as bash 5.2 applies it (recorded from /usr/bin/bash): setting
// it turns dotglob on, . and .. never match, and its patterns are matched
// against whole results with FNM_PATHNAME, except that a trailing `*` takes
// the rest of the path, slashes included.
func TestGlobIgnore(t *testing.T) {
	setup := "mkdir -p /tmp/gi/g/a /tmp/gi/g/.h /tmp/gi/g/B && cd /tmp/gi && touch g/a/x.txt g/.dot g/top.txt g/Top.md .hid vis; "
	tests := []struct{ in, out string }{
		{"GLOBIGNORE=x; echo *", ".hid g vis\n"},
		{"GLOBIGNORE=x; echo .*", ".hid\n"},
		{"GLOBIGNORE='g/*.txt:g/B'; echo g/*", "g/.dot g/.h g/Top.md g/a\n"},
		{"GLOBIGNORE='*'; echo g/*", "g/*\n"},
		{"GLOBIGNORE='g*'; echo g/*", "g/*\n"},
		{"GLOBIGNORE='*B'; echo g/*", "g/.dot g/.h g/B g/Top.md g/a g/top.txt\n"},
		{"GLOBIGNORE='*.txt'; echo g/*", "g/.dot g/.h g/B g/Top.md g/a g/top.txt\n"},
		{"GLOBIGNORE='*/*.txt'; echo g/*", "g/.dot g/.h g/B g/Top.md g/a\n"},
		{"GLOBIGNORE='g?*'; echo g/*", "g/.dot g/.h g/B g/Top.md g/a g/top.txt\n"},
		{"GLOBIGNORE='g/?dot'; echo g/*", "g/.h g/B g/Top.md g/a g/top.txt\n"},
		{"GLOBIGNORE='.*'; echo * .*", "g vis .*\n"},
		{"GLOBIGNORE='*/'; echo g/*/", "g/.h/ g/B/ g/a/\n"},
		{"GLOBIGNORE='g/\\*'; echo g/*", "g/.dot g/.h g/B g/Top.md g/a g/top.txt\n"},
		{"shopt -s extglob; GLOBIGNORE='g/@(B|a)'; echo g/*", "g/.dot g/.h g/Top.md g/top.txt\n"},
		{"GLOBIGNORE=; echo *", "g vis\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if out, errs, st := runScript(t, sh, setup+tt.in); out != tt.out || st != 0 {
			t.Errorf("%q: got %q (%q, %d), want %q", tt.in, out, errs, st, tt.out)
		}
	}
}
