package shell

import "testing"

// complete and compopt keep specs as bash 5.2 does (expectations from it;
// one name each, since bash lists several in its hash table's order).
func TestComplete(t *testing.T) {
	tests := []struct {
		name, in, out, stderr string
		status                int
	}{
		{"define and print", "complete -o nospace -o filenames -F _g baz; complete -p", "complete -o filenames -o nospace -F _g baz\n", "", 0},
		{"quoted args", "complete -W \"a b\" -P pre qux; complete -p qux", "complete -W 'a b' -P 'pre' qux\n", "", 0},
		{"actions", "complete -C 'my cmd' -A function -v -f zz; complete -p", "complete -f -v -A function -C 'my cmd' zz\n", "", 0},
		{"print all on no args", "complete -A file -X '*.o' f2; complete", "complete -f -X '*.o' f2\n", "", 0},
		{"missing", "complete -p nope", "", "bash: line 1: complete: nope: no completion specification\n", 1},
		{"remove", "complete -F f a; complete -r a; complete -p; complete -r a", "", "bash: line 1: complete: a: no completion specification\n", 1},
		{"remove all", "complete -F f a; complete -F g b; complete -r; complete -p", "", "", 0},
		{"bad option", "complete -Z x", "", "bash: line 1: complete: -Z: invalid option\n" + completeUsage + "\n", 2},
		{"bad -o", "complete -o bad x", "", "bash: line 1: complete: bad: invalid option name\n", 2},
		{"missing arg", "complete -F", "", "bash: line 1: complete: -F: option requires an argument\n" + completeUsage + "\n", 2},
		{"default spec", "complete -D -F _d; complete -p", "complete -F _d -D\n", "", 0},
		{"compopt on name", "complete -W 'a b' q; compopt -o nospace q; complete -p q; compopt +o nospace q; complete -p q", "complete -o nospace -W 'a b' q\ncomplete -W 'a b' q\n", "", 0},
		{"compopt outside completion", "compopt -o nospace", "", "bash: line 1: compopt: not currently executing completion function\n", 1},
		{"compopt unknown", "compopt -o nospace nope", "", "bash: line 1: compopt: nope: no completion specification\n", 1},
		{"compopt bad option", "complete -F f q; compopt -o bogus q", "", "bash: line 1: compopt: bogus: invalid option name\n", 2},
		{"subshell copy", "complete -F f q; (complete -r q); complete -p q", "complete -F f q\n", "", 0},
		{"builtins", "type -t complete compopt", "builtin\nbuiltin\n", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newTestShell(t, Limits{})
			out, errs, st := runScript(t, sh, tt.in)
			if out != tt.out || errs != tt.stderr || st != tt.status {
				t.Errorf("%q:\n got %q %q status %d\nwant %q %q status %d", tt.in, out, errs, st, tt.out, tt.stderr, tt.status)
			}
		})
	}
}
