package shell

import "testing"

// Namerefs at the edges bash 5.2 guards (recorded from /usr/bin/bash): a
// reference to itself or to nothing is refused at the top level and the
// variable stays as it was; a for loop over a nameref retargets it to
// each item; `declare x=` sets x to the empty string.
func TestNamerefEdges(t *testing.T) {
	tests := []struct{ in, out, stderr string }{
		{"declare -n nr=nr; echo $?; declare -p nr", "1\n",
			"bash: line 1: declare: nr: nameref variable self references not allowed\nbash: line 1: declare: nr: not found\n"},
		{"x=5; declare -n x=x; declare -p x", "declare -- x=\"5\"\n",
			"bash: line 1: declare: x: nameref variable self references not allowed\n"},
		{"declare -n nr=a; declare -n nr=nr; echo $?; declare -p nr", "1\ndeclare -n nr=\"a\"\n",
			"bash: line 1: declare: nr: nameref variable self references not allowed\n"},
		{"declare -n nr=''; echo $?", "1\n", "bash: line 1: declare: `': not a valid identifier\n"},
		{"declare -n nr=a; declare -n nr=; echo $?; declare -p nr", "1\ndeclare -n nr=\"a\"\n",
			"bash: line 1: declare: `': not a valid identifier\n"},
		{"a=1 b=2; declare -n nr; for nr in a b s; do echo \"$nr\"; done; declare -p nr", "1\n2\n\ndeclare -n nr=\"s\"\n", ""},
		{"declare -n nr; for nr in a 1x b; do echo \"[$nr]\"; done; echo $?; declare -p nr", "[]\n1\ndeclare -n nr=\"a\"\n",
			"bash: line 1: `1x': not a valid identifier\n"},
		{"a=1; declare -rn nr=a; for nr in b; do echo in; done; echo $?", "1\n", "bash: line 1: nr: readonly variable\n"},
		{"a=1; declare -n nr=a; (for nr in x; do :; done; declare -p nr); declare -p nr", "declare -n nr=\"x\"\ndeclare -n nr=\"a\"\n", ""},
		{"declare nr=; declare -p nr", "declare -- nr=\"\"\n", ""},
		{"declare -i n=; declare -p n", "declare -i n=\"0\"\n", ""},
		{"a=(1 2); declare a=; declare -p a", "declare -a a=([0]=\"\" [1]=\"2\")\n", ""},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if out, errs, _ := runScript(t, sh, tt.in); out != tt.out || errs != tt.stderr {
			t.Errorf("%q: got %q %q, want %q %q", tt.in, out, errs, tt.out, tt.stderr)
		}
	}
}

// declare -p output read back by eval (`--` ends declare's options, as
// declare -p writes it), and associative keys quoted where bash quotes
// them (recorded from /usr/bin/bash).
func TestDeclareRoundTrip(t *testing.T) {
	tests := []struct{ in, out string }{
		{"x='-7'; s=$(declare -p x); unset x; eval \"$s\"; echo $? \"$x\"", "0 -7\n"},
		{"x='--'; s=$(declare -p x); unset x; eval \"$s\"; echo $? \"$x\"", "0 --\n"},
		{"x=1; declare -- x=2; echo $x; export -- y=3; declare -p y; typeset -- t=4; echo $t", "2\ndeclare -x y=\"3\"\n4\n"},
		{"declare -A m=(['~']=1); declare -p m", "declare -A m=([\"~\"]=\"1\" )\n"},
		{"declare -A m=(['a~']=1); declare -p m", "declare -A m=([a~]=\"1\" )\n"},
		{"declare -A m=(['!x']=1); declare -p m", "declare -A m=([\"!x\"]=\"1\" )\n"},
		{"declare -A m=(['#x']=1); declare -p m", "declare -A m=([\"#x\"]=\"1\" )\n"},
		{"declare -A m=(['x#']=1); declare -p m", "declare -A m=([x#]=\"1\" )\n"},
		{"declare -A m=(['@']=1); declare -p m", "declare -A m=([\"@\"]=\"1\" )\n"},
		{"declare -A m=(['a,b:c-d.e%+/']=1); declare -p m", "declare -A m=([a,b:c-d.e%+/]=\"1\" )\n"},
		// unquoted keys the parser read as arithmetic keep their text
		{"declare -A m=([x=y]=1 [a+b]=2 [-1]=3 [x==y]=4); for k in \"${!m[@]}\"; do echo \"$k=${m[$k]}\"; done | sort", "-1=3\na+b=2\nx==y=4\nx=y=1\n"},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		if out, errs, _ := runScript(t, sh, tt.in); out != tt.out {
			t.Errorf("%q: got %q (%q), want %q", tt.in, out, errs, tt.out)
		}
	}
}

// declare -p's "not found" names the builtin that was run, as bash's does
// (recorded from bash 5.2).
func TestDeclareNotFoundName(t *testing.T) {
	checkRecorded(t, []recorded{
		{"typeset -p nosuch; declare -p nosuch2; echo st=$?", "st=1\n",
			"bash: line 1: typeset: nosuch: not found\nbash: line 1: declare: nosuch2: not found\n"},
	}, true)
}

// declare -n refuses an array, and an element, as a reference with bash's
// message, and a reference drops -i, -l and -u (recorded from bash 5.2,
// tests/nameref6.sub; warren made the array a reference silently).
func TestNamerefNotArray(t *testing.T) {
	checkRecorded(t, []recorded{
		{"y=42; typeset -i x=1; typeset -n x=y; echo $x; declare -p x; typeset -n x[3]=x; echo st=$?", "42\ndeclare -n x=\"y\"\nst=1\n", "bash: line 1: typeset: x[3]: reference variable cannot be an array\n"},
		{"y=1; a=(1 2); declare -n a=y; echo st=$? ${a[1]}; declare -A m=([k]=v); declare -n m=y; echo st=$? ${m[k]}; typeset -l q=A; typeset -n q=y; declare -p q", "st=1 2\nst=1 v\ndeclare -n q=\"y\"\n", "bash: line 1: declare: a: reference variable cannot be an array\nbash: line 1: declare: m: reference variable cannot be an array\n"},
	}, true)
}
