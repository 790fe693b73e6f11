package coreutils_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
)

// Cases recorded from GNU coreutils 9.1 (LC_ALL=C) where warren differed,
// found by conformance/busyboxsuite: sum, od's pre-POSIX offset operands
// (--traditional), unexpand's --first-only winning over -a and -t.
var gnuCases = []goldenCase{
	{Name: "sum_r_two", Args: []string{"sum", "-r", "h", "h"}, Files: map[string]string{"h": "HELLO\n"},
		Stdout: "36948     1 h\n36948     1 h\n"},
	{Name: "sum_s", Args: []string{"sum", "-s", "h"}, Files: map[string]string{"h": "HELLO\n"}, Stdout: "382 1 h\n"},
	{Name: "sum_stdin", Args: []string{"sum"}, Stdin: "HELLO", Stdout: "08341     1\n"},
	{Name: "sum_s_stdin", Args: []string{"sum", "-s"}, Stdin: "HELLO", Stdout: "372 1\n"},
	{Name: "sum_rs_last_wins", Args: []string{"sum", "-rs", "h"}, Files: map[string]string{"h": "HELLO\n"}, Stdout: "382 1 h\n"},
	{Name: "sum_missing", Args: []string{"sum", "nope"}, Stderr: "sum: nope: No such file or directory\n", Code: 1},
	{Name: "od_traditional_b", Args: []string{"od", "-b", "--traditional"}, Stdin: "HELLO",
		Stdout: "0000000 110 105 114 114 117\n0000005\n"},
	{Name: "od_file_offset", Args: []string{"od", "h", "2"}, Files: map[string]string{"h": "HELLO\n"},
		Stdout: "0000002 046114 005117\n0000006\n"},
	{Name: "od_plus_offset_stdin", Args: []string{"od", "+2"}, Stdin: "HELLO\n", Stdout: "0000002 046114 005117\n0000006\n"},
	{Name: "od_hex_offset", Args: []string{"od", "h", "0x1"}, Files: map[string]string{"h": "HELLO\n"},
		Stdout: "0000001 046105 047514 000012\n0000006\n"},
	{Name: "od_traditional_label", Args: []string{"od", "--traditional", "-c", "h", "1", "2"}, Files: map[string]string{"h": "HELLO\n"},
		Stdout: "0000001 (0000002)   E   L   L   O  \\n\n0000006 (0000007)\n"},
	{Name: "od_traditional_bad", Args: []string{"od", "--traditional", "h", "1", "x"}, Files: map[string]string{"h": "HELLO\n"},
		Stderr: "od: extra operand '1'\nod: compatibility mode supports at most one file\nTry 'od --help' for more information.\n", Code: 1},
	{Name: "unexpand_first_only_after_t", Args: []string{"unexpand", "--first-only", "-t4"}, Stdin: "\t\ta       b    c",
		Stdout: "\t\ta       b    c"},
	{Name: "unexpand_first_only_over_a", Args: []string{"unexpand", "-a", "--first-only", "-t2"}, Stdin: "  a       b\n",
		Stdout: "\ta       b\n"},
}

func TestGNUCases(t *testing.T) {
	tab := commands.Table{}
	coreutils.Register(tab)
	cmdtest.RunGolden(t, tab, gnuCases, nil)
}
