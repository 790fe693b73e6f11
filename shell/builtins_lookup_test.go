package shell

import "testing"

// TestLookupLikeBash: command -p searches the default path, and the last
// of type's -t, -p and -P decides what it prints (found by the
// differential harness's lookup producer; recorded from bash 5.2).
func TestLookupLikeBash(t *testing.T) {
	tests := []recorded{
		{`command -v -p cat; command -p -V ls; command -pv ls`, "/bin/cat\nls is /bin/ls\n/bin/ls\n", ""},
		{`PATH=/nonexist; command -pv cat; command -p cat /dev/null && echo ran`, "/bin/cat\nran\n", ""},
		{`type -tP ls; type -Pt ls; type -pt ls; type -tp echo; echo $?; type -tP echo`, "/usr/bin/ls\nfile\nfile\n0\n/usr/bin/echo\n", ""},
	}
	checkRecorded(t, tests, false)
}

// TestDiscardLineLikeBash: shift's "too many arguments" and a negative
// substring length abandon the command line being run (through the
// functions it called), and a script file goes on with its next line
// (found by the setpos and paramexp producers; recorded from bash 5.2).
func TestDiscardLineLikeBash(t *testing.T) {
	tests := []recorded{
		{"printf 'f() { shift 1 2; echo in-f; }; f; echo same-line\\necho next $?\\n' > sf.sh; bash sf.sh; echo st=$?", "next 1\nst=0\n", ""},
		{"printf 'f() { s=x; echo ${s:1:-1}; echo in-f; }; f; echo same-line\\necho next $?\\n' > sf.sh; bash sf.sh; echo st=$?", "next 1\nst=0\n", ""},
	}
	checkRecorded(t, tests, false)
}
