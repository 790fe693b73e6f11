package shell

import "testing"

// Empty subscripts, b[*]= and d[7]=( ) are errors bash reports when the
// command runs; the rest of the script runs on. Recorded from bash 5.2
// (bash <file).
func TestEmptySubscript(t *testing.T) {
	checkRecorded(t, []recorded{
		{"b[]=y; echo no\necho $?\n", "1\n", "bash: line 1: b[]: bad array subscript\n"},
		{"declare -A m; m[]=z; echo no\necho $? ${#m[@]}\n", "1 0\n", "bash: line 1: m[]: bad array subscript\n"},
		{"echo ${b[]}; echo no\necho $?\n", "1\n", "bash: line 1: ${b[]}: bad substitution\n"},
		{"b=(1 2); echo ${#b[]} no\necho ${b[]:-x} no\necho ${b[   ]} $?\n", "1 1\n", "bash: line 1: ${#b[]}: bad substitution\nbash: line 2: ${b[]:-x}: bad substitution\n"},
		{"declare -A m; m[\" \"]=sp; echo ${m[ ]}\nm[ ]=q; echo ${m[\" \"]}\nb=(1 2); b[ ]=z; echo ${b[@]}\nb[]=1\n", "sp\nq\nz 2\n", "bash: line 4: b[]: bad array subscript\n"},
		{"b=(1); b[*]=aaa; echo no\necho $?\nb[@]=x\ndeclare -A m; m[*]=x; m[@]=y; declare -p m\nb[]=1\n", "1\ndeclare -A m=([\"*\"]=\"x\" [\"@\"]=\"y\" )\n", "bash: line 1: b[*]: bad array subscript\nbash: line 3: b[@]: bad array subscript\nbash: line 5: b[]: bad array subscript\n"},
		{"d=([]=abcde [1]=\"test test\" [*]=last [-65]=negative [x-65]=n [@]=q); declare -p d\ndeclare -A m; m=([]=x [a]=1); declare -p m\n", "declare -a d=([1]=\"test test\")\ndeclare -A m=([a]=\"1\" )\n", "bash: line 1: []=abcde: bad array subscript\nbash: line 1: [*]=last: cannot assign to non-numeric index\nbash: line 1: [-65]=negative: bad array subscript\nbash: line 1: [x-65]=n: bad array subscript\nbash: line 1: [@]=q: cannot assign to non-numeric index\nbash: line 2: []=x: bad array subscript\n"},
		{"echo a; d[7]=(abdedfegeee); echo b $?\necho $?\nd[1]+=(a); echo no\ndeclare -p d\n", "a\n1\n", "bash: line 1: d[7]: cannot assign list to array member\nbash: line 3: d[1]: cannot assign list to array member\nbash: line 4: declare: d: not found\n"},
		{"cat <<!\n! x\n!\nb[]=1\n! true; echo $?\n", "! x\n1\n", "bash: line 4: b[]: bad array subscript\n"},
		{"cat <<-'E!'\n\t!\n\tE!\nb[]=1\necho ok\n", "!\nok\n", "bash: line 4: b[]: bad array subscript\n"},
	}, true)
}

// Words that look like subscripts, $(( that is a command substitution and
// malformed ${...} are not syntax errors to bash. Recorded from bash 5.2
// (bash <file).
func TestRefusedWordsRun(t *testing.T) {
	checkRecorded(t, []recorded{
		{"x=(grep [ 123 ] \\*); declare -p x\ny=([ab] [1]=q); declare -p y\nb[]=1\n", "declare -a x=([0]=\"grep\" [1]=\"[ 123 ]\" [2]=\"*\")\ndeclare -a y=([0]=\"[ab]\" [1]=\"q\")\n", "bash: line 3: b[]: bad array subscript\n"},
		{"echo $((echo a);(echo b)); echo $(( (1+2)*3 ))\nx=$((echo c) ); echo \"$x\"\nb[]=1\n", "a b\n9\nc\n", "bash: line 3: b[]: bad array subscript\n"},
		{"echo ${H*}; echo no\necho $?\n[[ -n x || ${H*} ]]; echo $?\nx=${x!}${y*} echo no\necho $?\necho '${H*}' \"it's ${#x}\"\n", "1\n0\n1\n${H*} it's 0\n", "bash: line 1: ${H*}: bad substitution\nbash: line 4: ${x!}${y*}: bad substitution\n"},
		{"echo ${H*}x y\necho a${H*}b\"c\"d e\necho ${x!}$y\necho \"${x!} z\" w\necho \"q ${x!} z\" w\necho \"q ${x!} z\"r w\necho p\"q ${x!} z\"r w\necho ab${x!}\nb[]=1\n", "", "bash: line 1: ${H*}x: bad substitution\nbash: line 2: a${H*}b\"c\"d: bad substitution\nbash: line 3: ${x!}$y: bad substitution\nbash: line 4: ${x!} z: bad substitution\nbash: line 5: q ${x!} z: bad substitution\nbash: line 6: q ${x!} z: bad substitution\nbash: line 7: q ${x!} z: bad substitution\nbash: line 8: ab${x!}: bad substitution\nbash: line 9: b[]: bad array subscript\n"},
	}, true)
}
