package shell

import "testing"

// TestSubstringPastEnd: an offset past the end expands to nothing before a
// negative length is checked (recorded from bash 5.2: past the highest
// index of an array, past $# + 1 for the positional parameters, past the
// length of a string).
func TestSubstringPastEnd(t *testing.T) {
	tests := []struct{ src, out, err string }{
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
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, tt.src)
		if out != tt.out || errs != tt.err {
			t.Errorf("%s: got %q %q, want %q %q", tt.src, out, errs, tt.out, tt.err)
		}
	}
}

// TestArithTextDollar: text evaluated as arithmetic (let's arguments, a
// variable's value, declare -i) has been expanded already; a $ left in it
// is bash's "operand expected" error, not an expansion (recorded from bash
// 5.2; warren used to expand it silently).
func TestArithTextDollar(t *testing.T) {
	tests := []struct{ src, out, err string }{
		{`iv=3; jv=1; let 'jv += $iv'; echo st $? $jv`, "st 1 1\n", "bash: line 1: let: jv += $iv: syntax error: operand expected (error token is \"$iv\")\n"},
		{`iv=3; x='$iv'; echo $(( x + 1 )); echo next`, "", "bash: line 1: $iv: syntax error: operand expected (error token is \"$iv\")\n"},
		{`declare -i n; n="\$x"; echo $n`, "", "bash: line 1: $x: syntax error: operand expected (error token is \"$x\")\n"},
		{`x=3; i=1; a=(5 6); a[$i]=9; let "y = $x + 1"; echo $(( "$x" + 1 )) ${a[@]} $y`, "4 5 9 4\n", ""},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, tt.src)
		if out != tt.out || errs != tt.err {
			t.Errorf("%s: got %q %q, want %q %q", tt.src, out, errs, tt.out, tt.err)
		}
	}
}

// TestBraceSequenceAtIntLimits: a sequence ending within one step of an
// int64 limit stops there (mvdan's expand.Braces wrapped around and never
// returned; recorded from bash 5.2).
func TestBraceSequenceAtIntLimits(t *testing.T) {
	tests := []struct{ src, out string }{
		{`echo {9223372036854775805..9223372036854775807}`, "9223372036854775805 9223372036854775806 9223372036854775807\n"},
		{`echo {-9223372036854775806..-9223372036854775808}`, "-9223372036854775806 -9223372036854775807 -9223372036854775808\n"},
		{`echo {1..9223372036854775807..9223372036854775807} x{9223372036854775807..9223372036854775807}y`, "1 x9223372036854775807y\n"},
		{`echo {9223372036854775800..9223372036854775807..3} {5..1..2}`, "9223372036854775800 9223372036854775803 9223372036854775806 5 3 1\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, tt.src)
		if out != tt.out {
			t.Errorf("%s: got %q, want %q (stderr %q)", tt.src, out, tt.out, errs)
		}
	}
}
