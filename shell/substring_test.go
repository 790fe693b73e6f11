package shell

import "testing"

// TestSubstringPastEnd: an offset past the end expands to nothing before a
// negative length is checked (recorded from bash 5.2: past the highest
// index of an array, past $# + 1 for the positional parameters, past the
// length of a string).
func TestSubstringPastEnd(t *testing.T) {
	tests := []recorded{
		{`b=abcd; echo "<${b:5:-2}>"`, "<>\n", ""},
		{`b=abcd; echo "<${b:4:-2}>"`, "", "bash: line 1: -2: substring expression < 0\n"},
		{`a=(x y); echo "<${a[@]:2:-1}>"`, "<>\n", ""},
		{`a=(x y); echo "<${a[@]:1:-1}>"`, "", "bash: line 1: -1: substring expression < 0\n"},
		{`a=([3]=x [5]=y); echo "<${a[@]:6:-1}>"`, "<>\n", ""},
		{`a=([3]=x [5]=y); echo "<${a[@]:5:-1}>"`, "", "bash: line 1: -1: substring expression < 0\n"},
		{`set -- x y; echo "<${@:4:-1}>"`, "<>\n", ""},
		{`set -- x y; echo "<${@:3:-1}>"`, "", "bash: line 1: -1: substring expression < 0\n"},
		{`a=(x y); set -- a b; echo "<${a[@]:2}>" "<${a[@]: -1}>" "<${@:3}>" "<${@:2}>"`, "<> <y> <> <b>\n", ""},
	}
	checkRecorded(t, tests, true)
}
