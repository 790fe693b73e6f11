package shell

import "testing"

// Assignment, reading and unset of bash's dynamic variables, as bash 5.2
// printed them (RANDOM's sequence after RANDOM=N is bash's generator's).
func TestDynamicVariables(t *testing.T) {
	checkRecorded(t, []recorded{
		{"RANDOM=1; echo $RANDOM $RANDOM $RANDOM; RANDOM=0; echo $RANDOM", "16807 10791 19566\n20814\n", ""},
		{"RANDOM=7; a=$RANDOM; RANDOM=' 7 '; [ $a = $RANDOM ] && echo reseeded", "reseeded\n", ""},
		{"SECONDS=100; echo $SECONDS; SECONDS=abc; echo $SECONDS; (( SECONDS = 7 )); echo $((SECONDS + 1))", "100\n0\n8\n", ""},
		{"declare SECONDS=5; echo $SECONDS; declare -n r=SECONDS; r=40; echo $SECONDS", "5\n40\n", ""},
		{"unset SECONDS; echo \"[$SECONDS]\"; SECONDS=3; echo $SECONDS", "[]\n3\n", ""},
		{"BASH_ARGV0=foo; echo $0; f() { BASH_ARGV0=x; }; f; echo $0 $BASH_ARGV0", "foo\nx x\n", ""},
		{"unset BASH_ARGV0; BASH_ARGV0=z; echo \"$0 $BASH_ARGV0\"", "bash z\n", ""},
		{"EPOCHSECONDS=3; SRANDOM=1; EPOCHREALTIME=2; echo ${#EPOCHSECONDS} ${EPOCHREALTIME//[0-9]/d}; (( SRANDOM >= 0 && SRANDOM < 1<<32 )) && echo ok", "10 dddddddddd.dddddd\nok\n", ""},
		{"unset EPOCHSECONDS SRANDOM; echo \"[$EPOCHSECONDS$SRANDOM]\"; EPOCHSECONDS=q; echo $EPOCHSECONDS", "[]\nq\n", ""},
		{"f() { local RANDOM; echo \"[$RANDOM]\"; RANDOM=3; echo $RANDOM; }; f", "[]\n3\n", ""},
		{"(( EPOCHSECONDS > 1700000000 )) && echo epoch; echo $(( ${EPOCHREALTIME%.*} - EPOCHSECONDS <= 1 ))", "epoch\n1\n", ""},
	}, true)
}
