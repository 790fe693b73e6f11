package shell

import "testing"

// TestEnvironCache: the exported environment is cached between commands
// and must follow every change to exported variables. Expected outputs are
// bash 5.2.15's.
func TestEnvironCache(t *testing.T) {
	tests := []struct{ in, want string }{
		{`x=1; export x; env | grep ^x=; x=2; env | grep ^x=`, "x=1\nx=2\n"},
		{`y=1; env | grep ^y=; export y; env | grep ^y=`, "y=1\n"},
		{`set -a; z=3; env | grep ^z=; z=4; env | grep ^z=`, "z=3\nz=4\n"},
		{`export a=1; env | grep ^a=; a=(x y); env | grep ^a=; echo end`, "a=1\nend\n"},
		{`export b=1; f() { local -x b=2; env | grep ^b=; b=3; env | grep ^b=; }; f; env | grep ^b=`, "b=2\nb=3\nb=1\n"},
		{`export e=1; declare -n r=e; r=5; env | grep ^e=`, "e=5\n"},
		{`export i; for i in 1 2 3; do env | grep ^i=; done`, "i=1\ni=2\ni=3\n"},
		{`export p=1; p+=2; env | grep ^p=; unset p; env | grep ^p=; echo end`, "p=12\nend\n"},
		{`export q=1; q=2 env | grep ^q=; env | grep ^q=`, "q=2\nq=1\n"},
		{`export s=1; read s <<< new; env | grep ^s=; declare +x s; env | grep ^s=; echo end`, "s=new\nend\n"},
		{`export c=1; for k in 1 2; do n=$k; env | grep ^c=; c=$k$k; done; env | grep ^c=`, "c=1\nc=11\nc=22\n"},
	}
	for _, tc := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, tc.in)
		if out != tc.want {
			t.Errorf("%s\nstdout %q, want %q (stderr %q)", tc.in, out, tc.want, errs)
		}
	}
}

// TestDefaultShoptsShared: new sessions share one default shopt table; no
// session (nor a nested `bash -O`) may change what the next one starts with.
func TestDefaultShoptsShared(t *testing.T) {
	sh := newTestShell(t, Limits{})
	runScript(t, sh, `shopt -s nullglob failglob; shopt -u extglob; bash -O dotglob -c 'shopt -s globstar'; (shopt -s nocaseglob)`)
	out, _, _ := runScript(t, sh, `shopt -p nullglob extglob`)
	if out != "shopt -s nullglob\nshopt -u extglob\n" {
		t.Errorf("the session lost its own options: %q", out)
	}
	fresh := newTestShell(t, Limits{})
	out, _, _ = runScript(t, fresh, `shopt -p nullglob failglob extglob dotglob globstar nocaseglob`)
	want := "shopt -u nullglob\nshopt -u failglob\nshopt -s extglob\nshopt -u dotglob\nshopt -u globstar\nshopt -u nocaseglob\n"
	if out != want {
		t.Errorf("a new session starts with %q, want %q", out, want)
	}
}
