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

// TestPOSIXRules applies the daylight-saving rules of POSIX TZ strings, as
// the C library does; expected lines were recorded with GNU date.
func TestPOSIXRules(t *testing.T) {
	fsys := newSandbox(t, nil, nil)
	tab := std.Table()
	const f = "+%F %T %Z %z"
	for _, c := range []struct{ tz, at, want string }{
		{"EST5EDT", "@1720000000", "2024-07-03 05:46:40 EDT -0400\n"},
		{"EST5EDT", "@1700000000", "2023-11-14 17:13:20 EST -0500\n"},
		{"CET-1CEST,M3.5.0,M10.5.0/3", "@1720000000", "2024-07-03 11:46:40 CEST +0200\n"},
		{"NZST-12NZDT,M9.5.0,M4.1.0/3", "@0", "1970-01-01 13:00:00 NZDT +1300\n"},
		{"PST8PDT,M3.2.0,M11.1.0", "@1720000000", "2024-07-03 02:46:40 PDT -0700\n"},
		{"<+0530>-5:30", "@0", "1970-01-01 05:30:00 +0530 +0530\n"},
		{"JST-9", "@0", "1970-01-01 09:00:00 JST +0900\n"},
	} {
		out, errs, code := runIn(fsys, tab, []string{"env", "TZ=" + c.tz, "date", "-d", c.at, f}, "")
		if out != c.want || code != 0 {
			t.Errorf("TZ=%s %s: got %q %q %d, want %q", c.tz, c.at, out, errs, code, c.want)
		}
	}
}
