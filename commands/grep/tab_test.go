package grep_test

import (
	"testing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/grep"
)

// TestTabAndWords: -T aligns line numbers and offsets to the file size's
// digits and puts a tab before the text, context groups are set apart
// across files, and -w's word characters are Unicode letters and digits
// (the harness runs in C.UTF-8). Recorded from GNU grep 3.8 in C.UTF-8.
func TestTabAndWords(t *testing.T) {
	files := map[string]string{"a.txt": "banana\napple\ncherry\napple\n", "u.txt": "\u00fcn\u00ef\n\u65e5\u672c\u8a9e\nabc\n", "s.txt": "x\na\ny\n", "e.txt": "a\n\nb a\n"}
	cases := []goldenCase{
		{Name: "T_n", Args: []string{"grep", "-Tn", "a", "e.txt"}, Stdin: "", Files: files,
			Stdout: "1:\ta\n3:\tb a\n", Stderr: "", Code: 0, After: map[string]string{}},
		{Name: "T_H_b", Args: []string{"grep", "-T", "-H", "-b", "apple", "a.txt"}, Stdin: "", Files: files,
			Stdout: "a.txt: 7:\tapple\na.txt:20:\tapple\n", Stderr: "", Code: 0, After: map[string]string{}},
		{Name: "T_multi_context", Args: []string{"grep", "-Tn", "-A1", "a", "s.txt", "a.txt"}, Stdin: "", Files: files,
			Stdout: "s.txt:2:\ta\ns.txt-3-\ty\n--\na.txt: 1:\tbanana\na.txt: 2:\tapple\na.txt- 3-\tcherry\na.txt: 4:\tapple\n", Stderr: "", Code: 0, After: map[string]string{}},
		{Name: "T_only", Args: []string{"grep", "-T", "-o", "-n", "an", "a.txt"}, Stdin: "", Files: files,
			Stdout: " 1:\tan\n 1:\tan\n", Stderr: "", Code: 0, After: map[string]string{}},
		{Name: "T_plain", Args: []string{"grep", "-T", "apple", "a.txt"}, Stdin: "", Files: files,
			Stdout: "apple\napple\n", Stderr: "", Code: 0, After: map[string]string{}},
		{Name: "T_count", Args: []string{"grep", "-Tc", "a", "a.txt", "s.txt"}, Stdin: "", Files: files,
			Stdout: "a.txt:3\ns.txt:1\n", Stderr: "", Code: 0, After: map[string]string{}},
		{Name: "context_across_files", Args: []string{"grep", "-C1", "a", "s.txt", "a.txt", "s.txt"}, Stdin: "", Files: files,
			Stdout: "s.txt-x\ns.txt:a\ns.txt-y\n--\na.txt:banana\na.txt:apple\na.txt-cherry\na.txt:apple\n--\ns.txt-x\ns.txt:a\ns.txt-y\n", Stderr: "", Code: 0, After: map[string]string{}},
		{Name: "w_unicode_empty", Args: []string{"grep", "-w", "", "u.txt"}, Stdin: "", Files: files,
			Stdout: "", Stderr: "", Code: 1, After: map[string]string{}},
		{Name: "w_unicode_letters", Args: []string{"grep", "-ow", "a"}, Stdin: "ab_c a-b \u00e9a a\u00e9 a\n", Files: files,
			Stdout: "a\na\n", Stderr: "", Code: 0, After: map[string]string{}},
	}
	tab := commands.Table{}
	grep.Register(tab)
	cmdtest.RunGolden(t, tab, cases, nil)
}
