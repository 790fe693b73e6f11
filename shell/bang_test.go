package shell

import "testing"

// Each ! before a pipeline toggles its negation, a ! with no pipeline is a
// negated empty one, and time time times once. Recorded from bash 5.2.
func TestBangsAndTimeTime(t *testing.T) {
	checkRecorded(t, []recorded{
		{"! ! true; echo $?\n! ! ! true; echo $?\n!; echo $?\n! ! ; echo $?\nfalse; ! !\necho $?\n!\necho $?\n! ! ! ; echo $?\nif ! ! true; then echo y; fi\necho \"! !\"; (( ! ! 2 )); echo $?\n", "0\n1\n1\n0\n0\n1\n1\ny\n! !\n0\n", ""},
		{"set -e\n! ! false\necho survived\n", "", ""},
		{"export TIMEFORMAT=X\ntime time -p echo a\ntime -p time echo a\ntime time\ntime time echo b\n", "a\na\nb\n", "real 0.00\nuser 0.00\nsys 0.00\nreal 0.00\nuser 0.00\nsys 0.00\nX\nX\n"},
	}, true)
}
