package coreutils_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// Expectations recorded from GNU coreutils 9.1 factor (LC_ALL=C).
func TestFactor(t *testing.T) {
	tab := commands.Table{}
	coreutils.Register(tab)
	for _, c := range []struct {
		args         []string
		stdin        string
		stdout, errs string
		code         int
	}{
		{[]string{"0", "1", "2", "1024"}, "", "0:\n1:\n2: 2\n1024: 2 2 2 2 2 2 2 2 2 2\n", "", 0},
		{[]string{"+12", " 7", "007"}, "", "12: 2 2 3\n7: 7\n7: 7\n", "", 0},
		{[]string{"2305843009213693951", "4611686018427387903", "18446744073709551615"}, "",
			"2305843009213693951: 2305843009213693951\n4611686018427387903: 3 715827883 2147483647\n" +
				"18446744073709551615: 3 5 17 257 641 65537 6700417\n", "", 0},
		{[]string{"302875106592253"}, "", "302875106592253: 13 13 13 13 13 13 13 13 13 13 13 13 13\n", "", 0},
		{[]string{"340282366920938463463374607431768211455", "1000000000000000000000000000000000000001"}, "",
			"340282366920938463463374607431768211455: 3 5 17 257 641 65537 274177 6700417 67280421310721\n" +
				"1000000000000000000000000000000000000001: 7 11 13 13 157 859 6397 216451 1058313049 388847808493\n", "", 0},
		{[]string{"abc", "6"}, "", "6: 2 3\n", "factor: 'abc' is not a valid positive integer\n", 1},
		{[]string{" 15 "}, "", "", "factor: ' 15 ' is not a valid positive integer\n", 1},
		{nil, "6 7\n 8x 9\n", "6: 2 3\n7: 7\n9: 3 3\n", "factor: '8x' is not a valid positive integer\n", 1},
	} {
		res := cmdtest.Run(tab["factor"], append([]string{"factor"}, c.args...), c.stdin, nil)
		if res.Stdout != c.stdout || res.Stderr != c.errs || res.Code != c.code {
			t.Errorf("factor %q <%q: got %q %q %d, want %q %q %d", c.args, c.stdin,
				res.Stdout, res.Stderr, res.Code, c.stdout, c.errs, c.code)
		}
	}
}
