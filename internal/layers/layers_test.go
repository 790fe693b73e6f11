// Package layers checks DESIGN.md's import rules: arrows point down only,
// and the resident tier (vfs, shell, commands) never reaches the host.
package layers

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/warren-sandbox/warren"

type pkg struct {
	ImportPath string
	Imports    []string // direct imports of non-test files
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// rule bans imports (prefix match on import paths) for packages under a
// prefix, each with its reason.
type rule struct {
	under  string
	banned []string
	why    string
}

var rules = []rule{
	{"vfs", []string{"os", "os/exec", "os/user", module + "/shell", module + "/commands", module + "/sandbox", module + "/native", module + "/server"},
		"the vfs never touches the host filesystem and sits below the shell"},
	{"shell", []string{"os", "os/exec", "os/user", module + "/native", module + "/sandbox", module + "/server", module + "/client"},
		"the interpreter is the resident tier: no host files, processes, users; ELF commands reach native only through a hook"},
	{"commands", []string{"os", "os/exec", "os/user", "net", "net/http", module + "/shell", module + "/native", module + "/sandbox", module + "/server"},
		"resident commands run over the vfs only, with no host or network access"},
	{"store", []string{module + "/vfs", module + "/image", module + "/shell", module + "/commands", module + "/sandbox", module + "/native", module + "/server", module + "/meta"},
		"store is the bottom layer"},
	{"wlog", []string{module + "/vfs", module + "/store", module + "/sandbox", module + "/shell", module + "/commands", module + "/native", module + "/server", module + "/meta", module + "/image"},
		"the write log is a bottom layer any committer can use: records are opaque bytes"},
	{"committer", []string{module + "/vfs", module + "/store", module + "/sandbox", module + "/shell", module + "/commands", module + "/native", module + "/server", module + "/meta", module + "/image", module + "/wlog"},
		"the committer only schedules: the commit itself (stores, vfs, fencing) is its owner's CommitFunc"},
	{"client", []string{module + "/server", module + "/sandbox", module + "/shell", module + "/vfs"},
		"the Go SDK talks HTTP; it must not drag the server into users' binaries"},
	{"wasm", []string{"os", "os/exec", "os/user", "net", "net/http", module + "/shell", module + "/native", module + "/sandbox", module + "/server"},
		"the WASM tier is resident: modules see the vfs and the shell's streams, never the host"},
	{"egress", []string{module + "/sandbox", module + "/server", module + "/shell", module + "/native", module + "/vfs"},
		"egress sits below the sandbox: policy, dialer, transport and proxy only; commands see it through commands.HTTPClient"},
	{"terminal", []string{"os", "os/exec", "os/user", "net", "net/http", module + "/shell", module + "/commands", module + "/native", module + "/sandbox", module + "/server"},
		"the terminal is resident: a line discipline over byte streams, driving a shell only through its Shell interface"},
	{"mcp", []string{module + "/server", module + "/sandbox", module + "/shell", module + "/vfs", module + "/native", module + "/commands"},
		"the MCP tools speak api.Service only, so they work in process and over HTTP alike"},
}

func TestLayers(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		for _, r := range rules {
			if rel != r.under && !strings.HasPrefix(rel, r.under+"/") {
				continue
			}
			for _, imp := range p.Imports {
				for _, b := range r.banned {
					if imp == b || (strings.HasSuffix(b, "/") && strings.HasPrefix(imp, b)) || strings.HasPrefix(imp, b+"/") && strings.HasPrefix(b, module) {
						t.Errorf("%s imports %s: %s", p.ImportPath, imp, r.why)
					}
				}
			}
		}
	}
}
