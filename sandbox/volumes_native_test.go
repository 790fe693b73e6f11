package sandbox_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
)

// TestVolume_Native: a sandbox's volumes through the native tier, over the
// real kernel: the same bytes at the same path both ways, never in the
// sandbox's delta (a fork lacks them), read-only in the kernel for a
// read-only volume, the volume's quota on native writes, and native writes
// committed with the call like resident ones.
func TestVolume_Native(t *testing.T) {
	rt := requireNative(t)
	e := newNativeEnv(t, rt)
	ctx := context.Background()
	vs := e.svc.(api.VolumeService)
	const quota = 1 << 20
	for _, v := range []api.VolumeCreate{{Name: "data", Size: quota}, {Name: "ref", Size: 1 << 20}} {
		if _, err := vs.CreateVolume(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	// The read-only volume's content, written through another sandbox.
	sb0, err := e.svc.Create(ctx, api.CreateRequest{Image: "busybox", Volumes: []api.VolumeMount{{Name: "ref", Path: "/ref"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, errs, res := run(t, e.svc, sb0.ID, "/bin/busybox sh -c 'echo shared > /ref/r.txt'"); res.Exit != 0 {
		t.Fatalf("writing ref natively: %q exit %d", errs, res.Exit)
	}
	if err := e.svc.Delete(ctx, sb0.ID); err != nil {
		t.Fatal(err)
	}
	mounts := []api.VolumeMount{{Name: "data", Path: "/data"}, {Name: "ref", Path: "/ref", ReadOnly: true}}
	sb, err := e.svc.Create(ctx, api.CreateRequest{Image: "busybox", Volumes: mounts})
	if err != nil {
		t.Fatal(err)
	}
	id := sb.ID

	t.Run("resident write, native cat", func(t *testing.T) {
		out, errs, res := run(t, e.svc, id, "echo resident > /data/in.txt; echo gone > /data/gone; /bin/busybox cat /data/in.txt /ref/r.txt")
		if out != "resident\nshared\n" || res.Exit != 0 {
			t.Fatalf("out %q stderr %q exit %d", out, errs, res.Exit)
		}
	})
	t.Run("native writes, resident sees", func(t *testing.T) {
		_, errs, res := run(t, e.svc, id, "/bin/busybox sh -c 'set -e; echo native >> /data/in.txt; echo new > /data/new; chmod 600 /data/new; rm /data/gone; mkdir /data/d; mv /data/new /data/d/n'")
		if res.Exit != 0 {
			t.Fatalf("stderr %q exit %d", errs, res.Exit)
		}
		out, errs, res := run(t, e.svc, id, "cat /data/in.txt /data/d/n; stat -c %a /data/d/n; ls /data | tr '\\n' ' '")
		if out != "resident\nnative\nnew\n600\nd in.txt " || res.Exit != 0 {
			t.Fatalf("resident view: %q %q exit %d", out, errs, res.Exit)
		}
		data, err := e.svc.ReadFile(ctx, id, "/data/d/n", 0, 0)
		if err != nil || string(data) != "new\n" {
			t.Fatalf("ReadFile: %q %v", data, err)
		}
	})
	t.Run("the delta lacks the volume's files", func(t *testing.T) {
		forks, err := e.svc.Fork(ctx, id, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer e.svc.Delete(ctx, forks[0].ID)
		out, errs, _ := run(t, e.svc, forks[0].ID, "ls -A /data /ref; cat /data/in.txt; /bin/busybox ls -A /data")
		if out != "/data:\n\n/ref:\n" || !strings.Contains(errs, "in.txt") {
			t.Fatalf("the fork's /data and /ref: %q %q (want empty mount points)", out, errs)
		}
	})
	t.Run("read-only volume", func(t *testing.T) {
		out, errs, res := run(t, e.svc, id, "/bin/busybox sh -c 'echo x > /ref/new'; echo status=$?; /bin/busybox cat /ref/r.txt")
		if out != "status=1\nshared\n" || !strings.Contains(errs, "Read-only file system") {
			t.Fatalf("out %q stderr %q exit %d", out, errs, res.Exit)
		}
	})
	t.Run("quota", func(t *testing.T) {
		out, errs, res := run(t, e.svc, id, "/bin/busybox sh -c 'head -c 1500000 /dev/urandom > /data/big; echo ok > /data/ok'; echo status=$?; ls /data | tr '\\n' ' '")
		if out != "status=1\nd in.txt ok " || !strings.Contains(errs, "volume data bytes quota exceeded") || !strings.Contains(errs, "/data/big") {
			t.Fatalf("out %q stderr %q exit %d", out, errs, res.Exit)
		}
		v, err := vs.GetVolume(ctx, "data")
		if err != nil || v.Used > quota {
			t.Fatalf("volume after the refusal: %+v %v", v, err)
		}
	})
	t.Run("background native writer", func(t *testing.T) {
		p, err := e.svc.StartProcess(ctx, id, api.ExecRequest{Script: "/bin/busybox sh -c 'echo bg > /data/bg; exec sleep 1000'"})
		if err != nil {
			t.Fatal(err)
		}
		defer e.svc.SignalProcess(ctx, id, p.PID, "KILL")
		// The files API harvests a running native process's volume writes.
		waitFor(t, "the background write through ReadFile", func() bool {
			data, err := e.svc.ReadFile(ctx, id, "/data/bg", 0, 0)
			return err == nil && string(data) == "bg\n"
		})
	})
	t.Run("committed with the call", func(t *testing.T) {
		if err := e.svc.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		sb2, err := e.svc.Create(ctx, api.CreateRequest{Image: "busybox", Volumes: mounts[:1]})
		if err != nil {
			t.Fatal(err)
		}
		out, errs, _ := run(t, e.svc, sb2.ID, "cat /data/in.txt /data/d/n /data/ok /data/bg")
		if out != "resident\nnative\nnew\nok\nbg\n" {
			t.Fatalf("a new sandbox reads %q %q", out, errs)
		}
		// Its native workspace holds the volume's tmpfs; delete removes it.
		run(t, e.svc, sb2.ID, "/bin/busybox true")
		if m, _ := hostState(t); !slices.ContainsFunc(m, func(s string) bool { return strings.Contains(s, "/vol/") }) {
			t.Fatalf("no volume tmpfs among the workspace mounts %v: the leak check below would prove nothing", m)
		}
		if err := e.svc.Delete(ctx, sb2.ID); err != nil {
			t.Fatal(err)
		}
		if m, c := hostState(t); len(m) != 0 || len(c) != 0 {
			t.Fatalf("after delete: mounts %v cgroups %v remain", m, c)
		}
	})
}
