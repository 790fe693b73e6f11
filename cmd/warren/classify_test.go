package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func cliRoot(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	c := newRoot()
	var out, errb bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&errb)
	c.SetIn(strings.NewReader(stdin))
	c.SetArgs(args)
	err := c.Execute()
	return out.String(), errb.String(), err
}

// TestClassify builds an image with an ELF git and a WASM ruby (their
// magic is what classify reads) and checks the table for a fixture script.
func TestClassify(t *testing.T) {
	data := t.TempDir()
	tree := t.TempDir()
	self, err := os.Executable() // an ELF file at hand
	if err != nil {
		t.Fatal(err)
	}
	elf, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"usr/bin/git":        elf,
		"usr/local/bin/ruby": []byte("\x00asm\x01\x00\x00\x00"),
		"etc/motd":           []byte("fixture\n"),
	}
	for p, b := range files {
		full := filepath.Join(tree, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, errs, err := cliRoot(t, "", "image", "build", "--local", "--data", data, "-t", "fx", tree); err != nil {
		t.Fatalf("image build: %v %s", err, errs)
	}
	want, err := os.ReadFile("testdata/classify/expected.txt")
	if err != nil {
		t.Fatal(err)
	}
	out, errs, err := cliRoot(t, "", "classify", "--data", data, "--image", "fx", "testdata/classify/agent.sh")
	if err != nil || out != string(want) {
		t.Fatalf("classify: %v %s\ngot:\n%s\nwant:\n%s", err, errs, out, want)
	}

	cases := []struct {
		name  string
		stdin string
		args  []string
		want  []string // lines the output holds
	}{
		{"native-first", "git status\n", []string{"--commands", "native-first"}, []string{"1     git status  native  native-first: /usr/bin/git"}},
		{"prefer-native", "git status\n", []string{"--prefer-native", "git"}, []string{"1     git status  native  native-first: /usr/bin/git"}},
		{"resident-only", "git apply --3way p\n", []string{"--commands", "resident-only"},
			[]string{`1     git apply --3way p  missing  the resident git refuses "apply --3way"; commands policy resident-only`}},
		{"jsonl table", `{"command": "git am -3 x.mbox"}` + "\n" + `{"command": "cat <"}` + "\n", nil,
			[]string{"1       1     git am -3 x.mbox  native    the resident git refuses \"am -3\"; falls back to /usr/bin/git",
				"2       0                       unparsed  cannot parse: 1:5: `<` must be followed by a word",
				"2 commands: resident 0, wasm 0, native 1, missing 0, dynamic 0, unparsed 1"}},
		{"jsonl", `{"command": "git am -3 x.mbox"}` + "\n" + `{"argv": ["git", "status"]}` + "\n", []string{"--json"},
			[]string{`{"record":1,"line":1,"argv":["git","am","-3","x.mbox"],"rung":"native","why":"the resident git refuses \"am -3\"; falls back to /usr/bin/git"}`,
				`{"record":2,"line":1,"argv":["git","status"],"rung":"resident","why":"warren's resident git"}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"classify", "--data", data, "--image", "fx"}, c.args...)
			out, errs, err := cliRoot(t, c.stdin, append(args, "-")...)
			if err != nil {
				t.Fatalf("%v %s", err, errs)
			}
			for _, l := range c.want {
				if !strings.Contains(out, l+"\n") {
					t.Fatalf("output lacks %q:\n%s", l, out)
				}
			}
		})
	}
	if _, _, err := cliRoot(t, "", "classify", "--data", data, "--image", "fx", "--commands", "fastest", "testdata/classify/agent.sh"); err == nil || !strings.Contains(err.Error(), `unknown mode "fastest"`) {
		t.Fatalf("bad policy: %v", err)
	}
	if _, _, err := cliRoot(t, "if then", "classify", "--data", data, "--image", "fx", "-"); err == nil || !strings.Contains(err.Error(), "cannot parse script") {
		t.Fatalf("bad script: %v", err)
	}
}
