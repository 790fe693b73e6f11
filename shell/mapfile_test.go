package shell

import "testing"

// TestMapfileLikeBash: -O keeps what the array holds (even -O 0), and -n
// leaves the input after its lines to the next reader (found by the
// differential harness's mapfile producer; recorded from bash 5.2).
func TestMapfileLikeBash(t *testing.T) {
	tests := []recorded{
		{`MAPFILE=(2 3 4); printf 'a:b:c:' | { mapfile -d ':' -O 0 -s 3; echo ${#MAPFILE[@]}; }`, "3\n", ""},
		{`arr=(a b c d); mapfile -t -O 1 arr <<<"x"; printf "<%s>" "${arr[@]}"`, "<a><x><c><d>", ""},
		{`arr=(a b c d); mapfile -t arr <<<"x"; printf "<%s>" "${arr[@]}"`, "<x>", ""},
		{`printf "1\n2\n3\n4\n" >mf; exec 3<mf; mapfile -u 3 -n 2 arr; read -u 3 x; echo "$x ${arr[*]}"`, "3 1\n 2\n\n", ""},
		{`printf "a b c d" | { mapfile -d " " -s 1 -n 2 a; read x; echo "$x|${a[*]}"; }`, "d|b  c \n", ""},
	}
	checkRecorded(t, tests, false)
}
