package grep_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/grep"
)

// Compiled patterns are cached by (pattern, mode, -i -w -x): the same
// pattern under other options must not reuse a matcher built for the first.
// Run in this order, each case after the ones that could poison it.
func TestCacheKeysOnOptions(t *testing.T) {
	const in = "Root\nroot\nrooted\nxroot x\nr.ot\nrxot\n\n"
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"grep", "root"}, "root\nrooted\nxroot x\n", 0},
		{[]string{"grep", "-i", "root"}, "Root\nroot\nrooted\nxroot x\n", 0},
		{[]string{"grep", "-w", "root"}, "root\n", 0},
		{[]string{"grep", "-x", "root"}, "root\n", 0},
		{[]string{"grep", "-c", "root"}, "3\n", 0},
		{[]string{"grep", "r.ot"}, "root\nrooted\nxroot x\nr.ot\nrxot\n", 0},
		{[]string{"grep", "-F", "r.ot"}, "r.ot\n", 0},
		{[]string{"grep", "-E", "r.ot"}, "root\nrooted\nxroot x\nr.ot\nrxot\n", 0},
		{[]string{"grep", "-E", "ro+t"}, "root\nrooted\nxroot x\n", 0},
		{[]string{"grep", "ro+t"}, "", 1}, // BRE: '+' is literal
		{[]string{"grep", "-c", ""}, "7\n", 0},
		{[]string{"grep", "-c", "-f", "/dev/null"}, "", 1},
		{[]string{"grep", "-c", ""}, "7\n", 0},
		{[]string{"grep", "-o", "oo"}, "oo\noo\noo\noo\n", 0},
		{[]string{"grep", "-on", "ro"}, "2:ro\n3:ro\n4:ro\n", 0},
		{[]string{"grep", "-v", "o"}, "\n", 0},
	} {
		for round := 0; round < 2; round++ { // the second round hits the cache
			res := cmdtest.Run(grep.Grep, tc.args, in, nil)
			if res.Stdout != tc.want || res.Code != tc.code {
				t.Errorf("round %d %q: stdout %q exit %d, want %q exit %d (stderr %q)", round, tc.args, res.Stdout, res.Code, tc.want, tc.code, res.Stderr)
			}
		}
	}
}

// The plain-string fast path selects exactly what the regexp would: every
// literal pattern gives the same lines as the same pattern spelled as a
// (non-literal) regexp alternative that matches the same strings.
func TestLiteralMatchesRegexp(t *testing.T) {
	in := "root:x:0:0:root:/root:/bin/bash\nhé root\n\xffroot\xfe\nROOT\n-root-\nro ot\n"
	for _, pat := range []string{"root", "ro ot", "-root-", ":/", "bash", "h", "é"} {
		lit := cmdtest.Run(grep.Grep, []string{"grep", "-n", "-e", pat}, in, nil)
		re := cmdtest.Run(grep.Grep, []string{"grep", "-n", "-e", pat, "-e", "\\(" + pat + "\\)"}, in, nil)
		if lit.Stdout != re.Stdout || lit.Code != re.Code {
			t.Errorf("%q: literal path %q exit %d, regexp %q exit %d", pat, lit.Stdout, lit.Code, re.Stdout, re.Code)
		}
	}
}
