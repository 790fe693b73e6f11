package shell

import "testing"

// declare's -a/-A filters list arrays made by assignment too, and
// declare name[N] with no value declares an array. Recorded from bash 5.2.
func TestDeclareArrayFilter(t *testing.T) {
	checkRecorded(t, []recorded{
		{"unset a; a=abcde; a[2]=bdef\ndeclare -a b[256]\ndeclare -r c[100]\ndeclare -i e[3]\ndeclare -A m=([k]=v)\ndeclare -a | grep -v -e BASH -e DIRSTACK -e FUNCNAME -e GROUPS -e PIPESTATUS\necho ---\ndeclare -ar | grep -v BASH\necho ---\ndeclare -A | grep -v BASH\n", "declare -a a=([0]=\"abcde\" [2]=\"bdef\")\ndeclare -a b\ndeclare -ar c\ndeclare -ai e\n---\ndeclare -ar c\n---\ndeclare -A m=([k]=\"v\" )\n", ""},
		{"x=1; declare x[2]; declare -p x; declare -A m; declare m[1]; declare -p m\n", "declare -a x=([0]=\"1\")\ndeclare -A m\n", ""},
	}, true)
}

// A subscript whose expansion makes the arithmetic (${a[(_$k=0)+2]}) is
// expanded first and evaluated at run time. Recorded from bash 5.2.
func TestDollarSubscript(t *testing.T) {
	checkRecorded(t, []recorded{
		{"_ENV=/bin/true\nx=${_ENV[(_$-=0)+(_=1)-_${-%%*i*}]}\necho \"[$x] $?\"\na=(p q r); k=1\necho ${a[$k+1]} ${a[(_$k=0)+2]}\necho $_1\n", "[] 0\nr r\n0\n", ""},
	}, true)
}
