package shell

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// A stage's runner goes back to stagePool with nothing of its sandbox but
// its hooks and the Shell they were built for.
func TestStageResetZeroes(t *testing.T) {
	fsys, tbl := benchBase(nil)
	sh, err := New(Config{FS: fsys, Commands: tbl})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := sh.Run(context.Background(), "SECRET=s1; f() { :; }; trap 'echo t' USR1; cd /tmp; set -- a b", nil, nil, nil); st != 0 {
		t.Fatalf("setup: status %d", st)
	}
	r := sh.st
	c := r.stageRunner()
	c.cmdHooks()
	c.lineno, c.status, c.curArgs = 7, 3, []string{"cat"}
	c.resetStage()
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "hooks" || name == "sh" {
			continue
		}
		if !v.Field(i).IsZero() {
			t.Errorf("field %s survives resetStage", name)
		}
	}
	if c.hooks == nil || c.sh != sh {
		t.Errorf("hooks %p, sh %p: want the hooks built for %p kept", c.hooks, c.sh, sh)
	}
	// Hooks built for another runner (copied from the parent) are dropped.
	d := r.stageRunner()
	d.hooks, d.hooksOf = r.cmdHooks(), r
	d.resetStage()
	if d.hooks != nil || d.sh != nil {
		t.Errorf("a runner's borrowed hooks survive resetStage")
	}
}

// Sandboxes taking turns with pipelines (so stagePool hands one's stage
// runners to the other) see only their own variables, functions, cwd and
// hostname.
func TestStagePoolNoLeak(t *testing.T) {
	type box struct {
		sh   *Shell
		want string
	}
	var boxes []box
	for _, name := range []string{"alpha", "beta"} {
		fsys, _ := benchBase(nil)
		fsys.MkdirAll("/"+name, 0o755)
		sh, err := New(Config{FS: fsys, Commands: stdTable(), Hostname: name})
		if err != nil {
			t.Fatal(err)
		}
		setup := "cd /" + name + "; V=" + name + "; f() { echo fn-" + name + "; }"
		if st, _ := sh.Run(context.Background(), setup, nil, nil, nil); st != 0 {
			t.Fatalf("%s setup: status %d", name, st)
		}
		boxes = append(boxes, box{sh, name + "\n" + name + " fn-" + name + " /" + name + "\n"})
	}
	// hostname reads the hooks of the stage's runner (inv.Sys).
	script := `hostname | cat; echo "$V $(f) $(pwd)" | cat | cat`
	for i := range 200 {
		b := boxes[i%2]
		var out strings.Builder
		if st, _ := b.sh.Run(context.Background(), script, nil, &out, nil); st != 0 || out.String() != b.want {
			t.Fatalf("turn %d: status %d, output %q, want %q", i, st, out.String(), b.want)
		}
	}
}

// A pooled stage runner that served another Shell gets the new Shell's
// System from rehook, and keeps its own funcs (bound to the runner).
func TestStageRehook(t *testing.T) {
	var shells []*Shell
	for _, name := range []string{"alpha", "beta"} {
		fsys, tbl := benchBase(nil)
		sh, err := New(Config{FS: fsys, Commands: tbl, Hostname: name, User: name + "-user"})
		if err != nil {
			t.Fatal(err)
		}
		shells = append(shells, sh)
	}
	a, b := shells[0].st, shells[1].st
	c := a.stageRunner()
	old := c.cmdHooks()
	if old.sys.Hostname != "alpha" {
		t.Fatalf("hostname %q under alpha", old.sys.Hostname)
	}
	// What releaseStage and beta's stageRunner do when the pool hands c
	// over (sync.Pool may not return c itself, hence by hand).
	c.resetStage()
	if c.hooks != old || c.sh != shells[0] {
		t.Fatal("resetStage dropped the runner's own hooks")
	}
	b.subshellInto(c)
	c.rehook(old)
	h := c.cmdHooks()
	if h != old {
		t.Error("rehook built new hooks: the runner's own are reused")
	}
	want := b.system(nil, nil)
	if h.sys.Hostname != want.Hostname || h.sys.User != want.User || !h.sys.Started.Equal(want.Started) || h.sys.MaxMemoryBytes != want.MaxMemoryBytes {
		t.Errorf("rehooked System %+v, want beta's %+v", h.sys, want)
	}
	if h.sys.Procs == nil || h.sys.Kill == nil || h.open == nil || h.exec == nil || h.execDir == nil || h.lookup == nil {
		t.Errorf("rehooked hooks lost funcs: %+v", h)
	}
	if ps := h.sys.Procs(); len(ps) == 0 || ps[0].Pid != b.pid {
		t.Errorf("Procs lists %+v, want beta's shell (pid %d) first", ps, b.pid)
	}
}
