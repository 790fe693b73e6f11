package shell

import "testing"

// ** under globstar, as bash 5.2 lists it (d/** names d itself as "d/").
func TestGlobStarListing(t *testing.T) {
	setup := "mkdir -p /tmp/gd/a/b && touch /tmp/gd/a/b/f.c /tmp/gd/x /tmp/gd/.h; cd /tmp; shopt -s globstar; "
	tests := []struct{ in, out string }{
		{"echo gd/**", "gd/ gd/a gd/a/b gd/a/b/f.c gd/x\n"},
		{"echo gd/**/", "gd/ gd/a/ gd/a/b/\n"},
		{"echo gd/**/*.c", "gd/a/b/f.c\n"},
		{"cd gd; echo **", "a a/b a/b/f.c x\n"},
		{"cd gd; echo **/", "a/ a/b/\n"},
		{"shopt -s dotglob; echo /tmp/gd/**", "/tmp/gd/ /tmp/gd/.h /tmp/gd/a /tmp/gd/a/b /tmp/gd/a/b/f.c /tmp/gd/x\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if out, errs, st := runScript(t, sh, setup+tt.in); out != tt.out || st != 0 {
			t.Errorf("%q: got %q (%q, %d), want %q", tt.in, out, errs, st, tt.out)
		}
	}
}

// Extglob groups with a directory part, ** through a symlinked directory
// and case classes under nocaseglob, as bash 5.2 expands them (recorded
// from /usr/bin/bash -O extglob).
func TestGlobGroupsLinksCase(t *testing.T) {
	setup := "mkdir -p /tmp/gg/g/a/b && cd /tmp/gg && touch g/a/x.txt g/a/b/y.txt g/B g/Top.md && ln -s a g/ln; shopt -s extglob globstar; "
	tests := []struct{ in, out string }{
		{"echo g/@(a|ln)", "g/a g/ln\n"},
		{"echo g/!(a)", "g/B g/Top.md g/ln\n"},
		{"echo g/@(a|B)/*", "g/a/b g/a/x.txt\n"},
		{"echo g/+(a)", "g/a\n"},
		{`echo g/\@\(a\)`, "g/@(a)\n"},
		{"echo g/**/*.txt", "g/a/b/y.txt g/a/x.txt g/ln/x.txt\n"},
		{"echo g/**/b", "g/a/b g/ln/b\n"},
		{"echo g/**/", "g/ g/a/ g/a/b/ g/ln/\n"},
		{"shopt -s nocaseglob; echo g/[[:upper:]]*", "g/B g/Top.md\n"},
		{"shopt -s nocaseglob; echo g/[[:lower:]]*", "g/a g/ln\n"},
		{"shopt -s nocaseglob; echo g/t*", "g/Top.md\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if out, errs, st := runScript(t, sh, setup+tt.in); out != tt.out || st != 0 {
			t.Errorf("%q: got %q (%q, %d), want %q", tt.in, out, errs, st, tt.out)
		}
	}
}
