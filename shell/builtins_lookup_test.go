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
