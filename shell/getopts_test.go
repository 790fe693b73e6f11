package shell

import "testing"

// getopts as bash 5.2 ran these: OPTIND assigned or declared local
// restarts the scan, a function with its own OPTIND gives the caller its
// place back, OPTIND past the words ends at once, OPTERR=0 silences, a
// readonly OPTARG stays, and getopts refuses options of its own.
func TestGetoptsState(t *testing.T) {
	checkRecorded(t, []recorded{
		{"f(){ local OPTIND; getopts abc x -abc; echo \"f:$x\"; }; set -- -xyz; getopts xyz o; echo $o; f; getopts xyz o; echo $o", "x\nf:a\ny\n", ""},
		{"g(){ local OPTIND opt; while getopts \"ab:\" opt; do echo \"$opt ${OPTARG-}\"; done; shift $((OPTIND-1)); echo \"rest: $*\"; }; g -a -b 1 x y; g -b2 z", "a \nb 1\nrest: x y\nb 2\nrest: z\n", ""},
		{"f(){ typeset OPTIND=1 opt; while getopts \":abcxyz\" opt; do echo \"opt: $opt\"; if [[ $opt = y ]]; then f -abc; fi; done; }; f -xyz", "opt: x\nopt: y\nopt: a\nopt: b\nopt: c\nopt: z\n", ""},
		{"h(){ OPTIND=4; }; set -- -abc; n=0; while getopts abc o && ((n++ < 5)); do echo $o; h; done; echo \"end $OPTIND\"", "a\nend 2\n", ""},
		{"set -- a; OPTIND=5; getopts a x; echo $? $OPTIND $x", "1 2 ?\n", ""},
		{"f(){ getopts ab x; echo $? $x $OPTIND; }; f -a; f -b; f -a -b", "0 a 2\n1 ? 2\n0 b 3\n", ""},
		{"OPTERR=0; getopts a o -q; echo \"$? $o [${OPTARG-u}]\"; OPTERR=1; getopts a o -q; echo $o", "0 ? [u]\n?\n", ""},
		{"getopts -x a o; echo $?; getopts -- a o -a; echo $? $o", "2\n0 a\n", "bash: line 1: getopts: -x: invalid option\ngetopts: usage: getopts optstring name [arg ...]\n"},
		{"readonly OPTARG; set -- -a bb; getopts :x x; echo \"[$OPTARG] $x\"; getopts x x; echo \"${OPTARG-unset} $x\"", "[] ?\nunset ?\n", "bash: line 1: OPTARG: readonly variable\n"},
	}, true)
}
