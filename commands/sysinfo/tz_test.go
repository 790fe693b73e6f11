package sysinfo_test

import (
	"os"
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
)

// TestTimeZones resolves TZ inside the sandbox: zone files come from the
// sandbox's /usr/share/zoneinfo (here a copy of Debian's Europe/Paris in
// testdata), POSIX offsets are parsed, and nothing is read from the host.
// Expected lines were recorded with GNU date.
func TestTimeZones(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	paris, err := os.ReadFile("testdata/zoneinfo/Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	fsys.MkdirAll("/usr/share/zoneinfo/Europe", 0o755)
	if err := fsys.WriteFile("/usr/share/zoneinfo/Europe/Paris", paris, 0o644); err != nil {
		t.Fatal(err)
	}
	tab := std.Table()
	for _, c := range []struct{ tz, want string }{
		{"Europe/Paris", "Thu Jan  1 01:00:00 CET 1970\n"},
		{"UTC-3", "Thu Jan  1 03:00:00 UTC 1970\n"},
		{"EST5EDT", "Wed Dec 31 19:00:00 EST 1969\n"},
		{"UTC", "Thu Jan  1 00:00:00 UTC 1970\n"},
	} {
		out, errs, code := runIn(fsys, tab, []string{"env", "TZ=" + c.tz, "date", "-d", "@0"}, "")
		if out != c.want || code != 0 {
			t.Errorf("TZ=%s: got %q %q %d, want %q", c.tz, out, errs, code, c.want)
		}
	}
	// a zone the sandbox does not have is not looked up on the host
	fsys.Remove("/usr/share/zoneinfo/Europe/Paris")
	out, _, _ := runIn(fsys, tab, []string{"env", "TZ=Europe/Paris", "date", "-d", "@0", "+%H"}, "")
	if out != "00\n" {
		t.Errorf("missing zone: %q, want UTC hours", out)
	}
}

// TestWhich searches PATH in the sandbox filesystem.
func TestWhich(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	fsys.MkdirAll("/usr/local/bin", 0o755)
	fsys.WriteFile("/usr/local/bin/tool", []byte("#!/bin/sh\n"), 0o755)
	fsys.WriteFile("/usr/local/bin/data", []byte("x"), 0o644)
	tab := std.Table()
	out, _, code := runIn(fsys, tab, []string{"env", "PATH=/usr/bin:/usr/local/bin", "which", "tool", "data"}, "")
	if out != "/usr/local/bin/tool\n" || code != 1 {
		t.Errorf("which: %q %d", out, code)
	}
}
