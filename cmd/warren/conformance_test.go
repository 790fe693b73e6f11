package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConformanceOilsVerb(t *testing.T) {
	dir := t.TempDir()
	spec := "## compare_shells: bash\n\n#### ok\necho hi\n## stdout: hi\n\n#### fails\necho no\n## stdout: yes\n\n#### argv helper\nargv.py a 'b c'\n## stdout: ['a', 'b c']\n"
	if err := os.WriteFile(filepath.Join(dir, "mini.test.sh"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newConformanceCmd()
	var out bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&out)
	c.SetArgs([]string{"oils", dir})
	if err := c.Execute(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if last != `{"suite":"oils","files":1,"cases":3,"passed":2}` {
		t.Errorf("last line %q\n%s", last, out.String())
	}
	c = newConformanceCmd()
	c.SetOut(&out)
	c.SetArgs([]string{"oils", filepath.Join(dir, "missing")})
	if err := c.Execute(); err == nil {
		t.Errorf("no error for a directory without cases")
	}
}

func TestConformanceCommandsVerb(t *testing.T) {
	dir := t.TempDir()
	fx := `{"a": {"command": "grep -c x f.txt", "files": {"f.txt": "x\ny\nx\n"}, "stdout": "2\n", "stderr": "", "exitCode": 0},
	        "b": {"command": "cat nope", "files": {}, "stdout": "", "stderr": "", "exitCode": 0}}`
	if err := os.WriteFile(filepath.Join(dir, "mini.fixtures.json"), []byte(fx), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newConformanceCmd()
	var out, errOut bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&errOut)
	c.SetArgs([]string{"commands", "--json", dir})
	if err := c.Execute(); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	// "cat nope" exits 1, so fixture b fails: 1 of 2.
	if got := strings.TrimSpace(out.String()); got != `{"suite":"commands","fixtures":2,"passed":1}` {
		t.Errorf("stdout %q, want only the summary line", got)
	}
	c = newConformanceCmd()
	c.SetOut(&out)
	c.SetErr(&errOut)
	c.SetArgs([]string{"commands", t.TempDir()})
	if err := c.Execute(); err == nil {
		t.Errorf("no error for a directory without fixtures")
	}
}
