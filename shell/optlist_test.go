package shell

import (
	"os/exec"
	"strings"
	"testing"
)

// set -o, set +o, shopt and shopt -p list every option bash 5.2 has, in
// its order and with its defaults, so a script can save and restore them
// (eval "$(set +o)"). extglob is on by default here (patterns are always
// parsed with it): the one deliberate difference.
func TestOptionListings(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found: no reference for the option listings")
	}
	script := "set -o; set +o; shopt; shopt -p; shopt -po"
	want, err := exec.Command(bash, "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	w := strings.ReplaceAll(string(want), "extglob        \toff", "extglob        \ton")
	w = strings.ReplaceAll(w, "shopt -u extglob", "shopt -s extglob")
	sh := newTestShell(t, Limits{})
	out, errs, st := runScript(t, sh, script)
	if out != w || st != 0 {
		t.Errorf("listing differs from bash's (stderr %q):\n got %q\nwant %q", errs, out, w)
	}
	// the listings read back
	out, errs, st = runScript(t, sh, "set -o vi; s=$(set +o); set -o emacs; eval \"$s\"; set -o | grep -E '^(vi|emacs) '")
	if out != "emacs          \toff\nvi             \ton\n" || st != 0 {
		t.Errorf("restore: got %q %q %d", out, errs, st)
	}
}
