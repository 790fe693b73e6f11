package shell

import "testing"

// local - makes a function's set options its own: they are put back when
// it returns, shopt options are not (recorded from bash 5.2; warren said
// "local: `-': not a valid identifier").
func TestLocalDash(t *testing.T) {
	checkRecorded(t, []recorded{
		{"f(){ local -; set -eu -o pipefail; [[ $- == *e*u* ]] && echo in; shopt -s nullglob; }; f; [[ $- == *e* || $- == *u* ]] || echo out; shopt -p nullglob; set -o | grep pipefail", "in\nout\nshopt -s nullglob\npipefail       \toff\n", ""},
		{"g(){ local - x=1; set -f; echo $x; h; [[ $- == *f* ]] && echo still; }; h(){ local -; set +f; }; g; [[ $- == *f* ]] || echo restored", "1\nstill\nrestored\n", ""},
		{"set -u; f(){ local -; set +u; echo \"${nosuch}ok\"; }; f; [[ $- == *u* ]] && echo u-back", "ok\nu-back\n", ""},
	}, true)
}
