package sed_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/sed"
)

// Cases recorded from GNU sed 4.9 where warren differed (found by
// conformance/busyboxsuite): a last line without a newline keeps lacking it
// through p, s///p, P, W and w files; every line read clears t's flag and
// so does a T that does not jump; a/i/c text decodes GNU's escapes.
var gnuCases = []goldenCase{
	{Name: "p_no_final_newline", Args: []string{"sed", "-ne", "s/woo/bang/p", "input", "-"},
		Stdin: "c no\nd woo", Files: map[string]string{"input": "a woo\nb woo"}, Stdout: "a bang\nb bang\nd bang"},
	{Name: "p_newline_between_files", Args: []string{"sed", "-ne", "s/woo/bang/p", "input", "-"},
		Stdin: "c no\nd no", Files: map[string]string{"input": "a woo\nb woo"}, Stdout: "a bang\nb bang"},
	{Name: "p_twice", Args: []string{"sed", "-n", "p;p"}, Stdin: "a", Stdout: "a\na"},
	{Name: "P_no_newline", Args: []string{"sed", "-n", "P"}, Stdin: "a", Stdout: "a"},
	{Name: "W_stdout", Args: []string{"sed", "-n", "W /dev/stdout"}, Stdin: "a", Stdout: "a"},
	{Name: "w_file", Args: []string{"sed", "-e", "s/i/z/", "-e", "woutputw", "input", "-"},
		Stdin: "again", Files: map[string]string{"input": "thingy"}, Stdout: "thzngy\nagazn",
		After: map[string]string{"outputw": "thzngy\nagazn"}},
	{Name: "n_clears_t", Args: []string{"sed", "s/1/x/;n;t e;s/^/no/;:e"}, Stdin: "1\n2\n", Stdout: "x\nno2\n"},
	{Name: "N_clears_t", Args: []string{"sed", "s/1/x/;N;t e;s/^/no/;:e"}, Stdin: "1\n2\n", Stdout: "nox\n2\n"},
	{Name: "T_clears_t", Args: []string{"sed", "s/1/x/;T;t e;s/^/no/;:e"}, Stdin: "1\n2\n", Stdout: "nox\n2\n"},
	{Name: "T_n_loop", Args: []string{"sed", "s/1/x/;T;n;: next;s/3/y/;t quit;n;b next;: quit;q"},
		Stdin: "0\n1\n2\n3\n", Stdout: "0\nx\n2\ny\n"},
	{Name: "a_escapes", Args: []string{"sed", `/1/a\\t\rzero\none\\ntwo\\\nthree`}, Stdin: "line1\n",
		Stdout: "line1\n\t\rzero\none\\ntwo\\\nthree\n"},
	{Name: "i_escapes", Args: []string{"sed", `/1/i\\t\rzero\none\\ntwo\\\nthree`}, Stdin: "line1\n",
		Stdout: "\t\rzero\none\\ntwo\\\nthree\nline1\n"},
	{Name: "a_numeric_escapes", Args: []string{"sed", `a\\f\v\a\x41\o102\d67\cD\q\\z`}, Stdin: "x\n",
		Stdout: "x\n\f\v\aABC\x04q\\z\n"},
	{Name: "c_hex_backslash", Args: []string{"sed", `c\\x5c`}, Stdin: "x\n", Stdout: "\\\n"},
}

func TestGNUCases(t *testing.T) {
	tab := commands.Table{}
	sed.Register(tab)
	cmdtest.RunGolden(t, tab, gnuCases, nil)
}
