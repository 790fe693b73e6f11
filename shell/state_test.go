package shell

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Run half a script, serialise, restore into a new interpreter, run the
// rest: the output equals an unbroken run.
func TestStateRoundTrip(t *testing.T) {
	first := `
x=1; declare -i n=41; n+=1; readonly R=ro; export E=exp
declare -a arr=(a 'b c' [7]=sparse); declare -A m=([k]=v [x]='y z')
declare -n ref=x; declare -l low=ABC
f() { echo "f:$1:$x"; return 3; }
alias ll='echo ll'
set -o pipefail; shopt -s nullglob extglob
trap 'echo bye' EXIT
cd /tmp; pushd /etc >/dev/null; umask 027
set -- p1 'p 2'
false
`
	second := `
echo "$? $x $n $R $E ${arr[@]} ${!arr[@]} ${m[k]} ${m[x]} $ref $low"
f z; echo $?
echo $PWD; dirs; umask; echo "$@"; echo $RANDOM $RANDOM
shopt -q nullglob && echo nullglob; [[ -o pipefail ]] && echo pipefail
trap -p EXIT; alias
`
	unbroken := newTestShell(t, Limits{})
	_, _, _ = runScript(t, unbroken, first)
	want, wantErr, wantSt := runScript(t, unbroken, second)

	half := newTestShell(t, Limits{})
	_, _, _ = runScript(t, half, first)
	state, err := half.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	again, err := half.MarshalState()
	if err != nil || !bytes.Equal(state, again) {
		t.Fatalf("encoding is not deterministic")
	}
	restored, err := Restore(half.cfg, state)
	if err != nil {
		t.Fatal(err)
	}
	got, gotErr, gotSt := runScript(t, restored, second)
	if got != want || gotErr != wantErr || gotSt != wantSt {
		t.Errorf("restored run differs:\n got %q %q %d\nwant %q %q %d", got, gotErr, gotSt, want, wantErr, wantSt)
	}
	if !strings.Contains(want, "f:z:1") || !strings.Contains(want, "42") {
		t.Errorf("unexpected output %q", want)
	}
	for _, bad := range [][]byte{nil, []byte("WSH\x02"), state[:len(state)/2], append(append([]byte{}, state...), 1)} {
		if _, err := Restore(half.cfg, bad); err == nil {
			t.Errorf("Restore accepted %d bad bytes", len(bad))
		}
	}
}

func TestFork(t *testing.T) {
	sh := newTestShell(t, Limits{})
	runScript(t, sh, `x=parent; echo data > /tmp/f; g() { echo g; }`)
	child := sh.Fork(sh.FS().Fork())
	runScript(t, child, `x=child; echo changed > /tmp/f; g() { echo h; }`)
	out, _, _ := runScript(t, sh, `echo $x; cat /tmp/f; g`)
	if out != "parent\ndata\ng\n" {
		t.Errorf("parent changed by child: %q", out)
	}
	out, _, _ = runScript(t, child, `echo $x; cat /tmp/f; g`)
	if out != "child\nchanged\nh\n" {
		t.Errorf("child: %q", out)
	}
}

func FuzzRestore(f *testing.F) {
	sh, err := New(Config{FS: newTestShell(f, Limits{}).FS()})
	if err != nil {
		f.Fatal(err)
	}
	sh.Run(context.Background(), "a=(1 2); f(){ :; }", nil, nil, nil)
	st, _ := sh.MarshalState()
	f.Add(st)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Restore(sh.cfg, b)
		if err != nil {
			return
		}
		if _, err := s.MarshalState(); err != nil {
			t.Fatal(err)
		}
	})
}
