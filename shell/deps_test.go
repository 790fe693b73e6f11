package shell

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The interpreter is the sandbox boundary: its code must not reach the
// host. Each banned import has its reason.
var bannedImports = map[string]string{
	"os":                    "host files and environment",
	"os/exec":               "host processes",
	"os/user":               "host user database",
	"net":                   "host network",
	"plugin":                "host code loading",
	"mvdan.cc/sh/v3/interp": "reaches the host in many places (issue 3)",
	"github.com/warren-sandbox/warren/native": "the native tier is reached through Config.Native only",
}

func TestNoHostImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if why, bad := bannedImports[p]; bad {
				t.Errorf("%s imports %s (%s)", f, p, why)
			}
		}
	}
}
