package shell

import "testing"

// An associative subscript in (( )) is expanded once: its value is the
// key, not text to expand again; and single quotes in (( )) are plain
// characters, an error when the command runs, not when it is parsed.
// Recorded from bash 5.2.
func TestArithAssocKeyOnce(t *testing.T) {
	checkRecorded(t, []recorded{
		{"declare -A assoc\nkey='x],b[$(echo uname >&2)'\n(( assoc[$key]++ ))\ndeclare -p assoc\n(( assoc['$key']++ ))\ndeclare -p assoc\n(( assoc[\"$key\"]++ ))\n(( assoc[$key]+=5 ))\ndeclare -p assoc\n", "declare -A assoc=([\"x],b[\\$(echo uname >&2)\"]=\"1\" )\ndeclare -A assoc=([\"\\$key\"]=\"1\" [\"x],b[\\$(echo uname >&2)\"]=\"1\" )\ndeclare -A assoc=([\"\\$key\"]=\"1\" [\"x],b[\\$(echo uname >&2)\"]=\"7\" )\n", ""},
		{"x=5\n(( 'x'++ ))\necho $? $x\n(( x++ ))\necho $x\n", "1 5\n6\n", "bash: line 2: ((: 'x'++ : syntax error: operand expected (error token is \"'x'++ \")\n"},
	}, true)
}
