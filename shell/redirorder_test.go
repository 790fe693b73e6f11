package shell

import "testing"

// TestRedirectAfterExpansion: bash expands a simple command's words and
// prefix assignments before performing its redirections, so a command may
// read the file its redirection truncates. Expected outputs are bash
// 5.2.15's (each case run as a script with cwd /tmp).
func TestRedirectAfterExpansion(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"arith of subst", `echo 5 > /tmp/c; echo $(( $(cat /tmp/c) + 1 )) > /tmp/c; cat /tmp/c`, "6\n"},
		{"assignment only", `echo 5 > /tmp/c; x=$(cat /tmp/c) > /tmp/c; echo "[$x]"; wc -c < /tmp/c`, "[5]\n0\n"},
		{"cat f > f truncates", `echo abc > /tmp/c; cat /tmp/c > /tmp/c; wc -c < /tmp/c`, "0\n"},
		{"prefix assignment", `echo 5 > /tmp/c; x=$(cat /tmp/c) bash -c 'echo $x' > /tmp/c; cat /tmp/c`, "5\n"},
		{"subst runs before create", `rm -f /tmp/nf; echo $(ls /tmp/nf 2>/dev/null || echo absent) > /tmp/nf; cat /tmp/nf`, "absent\n"},
		{"function", `f() { echo $1; }; echo 7 > /tmp/c; f $(cat /tmp/c) > /tmp/c; cat /tmp/c`, "7\n"},
		{"group redirects first", `echo 8 > /tmp/c; { echo $(cat /tmp/c); } > /tmp/c; echo "[$(cat /tmp/c)]"`, "[]\n"},
		{"subshell redirects first", `echo 9 > /tmp/c; (echo $(cat /tmp/c)) > /tmp/c; echo "[$(cat /tmp/c)]"`, "[]\n"},
		{"target sees outer vars", `f() { echo $1; }; x=foo; x=bar echo hi > /tmp/rx-$x; x=bar f > /tmp/rf-$x; cat /tmp/rx-foo /tmp/rf-foo`, "hi\n\n"},
		{"subst stderr not redirected", `echo 3 > /tmp/c; echo $(cat /tmp/c; echo err >&2) > /tmp/c 2>/tmp/xt; cat /tmp/c; wc -c < /tmp/xt`, "3\n0\n"},
		{"empty command", `echo 4 > /tmp/c; e=; $e > /tmp/c; wc -c < /tmp/c`, "0\n"},
		{"empty command with assignment", `echo 4 > /tmp/c; x=$(cat /tmp/c) $e > /tmp/c; echo "[$x]"; wc -c < /tmp/c`, "[4]\n0\n"},
		{"append", `echo 1 > /tmp/c; echo $(cat /tmp/c) >> /tmp/c; cat /tmp/c`, "1\n1\n"},
		{"failed redirection", `echo 2 > /tmp/c; echo $(cat /tmp/c) > /nonexistent/dir/f; echo "st=$?"; cat /tmp/c`, "st=1\n2\n"},
		{"xtrace before redirection", `set -x; echo 6 > /tmp/c; echo $(cat /tmp/c) > /tmp/c 2>/tmp/xt; set +x; wc -c < /tmp/xt`, "0\n"},
		{"export", `echo 5 > /tmp/c; export x=$(cat /tmp/c) > /tmp/c; echo "[$x]"`, "[5]\n"},
		{"local", `f() { local y=$(cat /tmp/c) 2>/dev/null > /tmp/c; echo "[$y]"; }; echo 6 > /tmp/c; f; wc -c < /tmp/c`, "[6]\n0\n"},
		{"declare -i", `echo 41 > /tmp/c; declare -i n=$(cat /tmp/c)+1 > /tmp/c; echo "[$n]"`, "[42]\n"},
		{"expansion error: no file", `echo ${nosuch:?gone} > /tmp/never; echo no`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh := newTestShell(t, Limits{})
			out, errs, _ := runScript(t, sh, "cd /tmp; "+tc.in)
			if out != tc.want {
				t.Errorf("%s\nstdout %q, want %q (stderr %q)", tc.in, out, tc.want, errs)
			}
		})
	}
	sh := newTestShell(t, Limits{})
	runScript(t, sh, `echo ${nosuch:?gone} > /tmp/never`)
	if _, err := sh.FS().Stat("/tmp/never"); err == nil {
		t.Error("a failed expansion still created the redirection's file")
	}
}
