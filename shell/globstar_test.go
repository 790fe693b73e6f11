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
