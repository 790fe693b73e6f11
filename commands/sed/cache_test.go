package sed_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/sed"
)

// Compiled expressions are cached by (syntax, flags, pattern): the same
// text under another syntax or flag must not reuse the first compile.
func TestCacheKeysOnSyntaxAndFlags(t *testing.T) {
	const in = "Root\nroot\nro+t\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sed", "-n", "/ro+t/p"}, "ro+t\n"},
		{[]string{"sed", "-E", "-n", "/ro+t/p"}, "root\n"},
		{[]string{"sed", "-n", "/root/p"}, "root\n"},
		{[]string{"sed", "-n", "/root/Ip"}, "Root\nroot\n"},
		{[]string{"sed", "s/root/X/"}, "Root\nX\nro+t\n"},
		{[]string{"sed", "s/root/X/I"}, "X\nX\nro+t\n"},
		{[]string{"sed", "-E", "s/(r)o+/\\1/"}, "Root\nrt\nr+t\n"},
	} {
		for round := 0; round < 2; round++ { // the second round hits the cache
			res := cmdtest.Run(sed.Sed, tc.args, in, nil)
			if res.Stdout != tc.want || res.Code != 0 {
				t.Errorf("round %d %q: stdout %q exit %d, want %q (stderr %q)", round, tc.args, res.Stdout, res.Code, tc.want, res.Stderr)
			}
		}
	}
}
