package sed_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands/std"
	"github.com/warren-sandbox/warren/conformance/differential"
)

// TestAgainstGNU runs each script in bash with GNU sed and in warren's
// shell (the differential harness's runner): the BusyBox-suite findings.
func TestAgainstGNU(t *testing.T) {
	differential.CheckAgainst(t, std.Table(), []string{"sed"}, "", []string{
		`printf 'a\nb\nc\nd\n' | sed '1d;1,3p'`,
		`printf 'a\nb\nc\nd\n' | sed -n '2d;2,3p'`,
		`printf 'a\nb\nc\nd\n' | sed -n '1d;1,/c/p'`,
		`printf 'a\nb\nc\nd\ne\n' | sed -n '1d;1,+2p'`,
		`seq 7 | sed -n '5d;5,3p'`,
		`seq 7 | sed -n '2d;2,/3/p'`,
		`seq 7 | sed -n '$!d;1,3p'`,
		`printf 'a\nb\nc\nd\ne\n' | sed -n '2d;2,~4p'`,
		`printf 'ab\n' | sed 's&a&[\&]&'`,
		`printf 'ab\n' | sed 's&a&x&'`,
		`printf 'a\nb\n' | sed -n '/a/{p;b end}; p; :end'`,
		`printf 'a\nb\n' | sed '{b foo }; s/a/X/; :foo'`,
		`printf 'ab\ncd\n' | sed 's/a/x/;T;s/b/y/'`,
		`printf 'ab\ncd\n' | sed -n 's/a/x/;T e;p;:e'`,
		`printf 'a\nb\n' | sed 'a\\thello'`,
		`printf 'a\nb\n' | sed 'a hello\tworld'`,
		`printf 'ab' | sed 's/b/c/'`,
	})
}
