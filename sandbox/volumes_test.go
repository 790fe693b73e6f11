package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox"
)

// TestVolumeGC: a volume's committed tree is a GC root: after its sandbox
// is deleted and two sweeps with no grace, a new sandbox reads every file
// back; once the volume is deleted its objects are swept.
// It runs with the in-process collector and with one that only has the
// Manager's GCRoots (offline warren gc, the front of worker mode).
func TestVolumeGC(t *testing.T) {
	for _, from := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "from-roots"}[from], func(t *testing.T) { volumeGC(t, from) })
	}
}

func volumeGC(t *testing.T, fromRoots bool) {
	ctx := context.Background()
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m, l := durableManager(t, p, d, "n1", time.Second)
	defer func() { m.Close(ctx); l.Close() }()
	svc := m.For("t")
	vs := svc.(api.VolumeService)
	if _, err := vs.CreateVolume(ctx, api.VolumeCreate{Name: "data", Size: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	mount := []api.VolumeMount{{Name: "data", Path: "/data"}}
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Volumes: mount})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // three generations, each replacing the last one's file
		if out, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: fmt.Sprintf("rm -f /data/r*; head -c 300000 /dev/urandom > /data/r%d; echo %d > /data/v", i, i)}); err != nil || res.Exit != 0 {
			t.Fatalf("write %d: %v %+v %s", i, err, res, out)
		}
	}
	want, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "sha256sum /data/r2; cat /data/v"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	o := sandbox.GCOptions{Grace: time.Nanosecond}
	collect := func(m *sandbox.Manager) (sandbox.GCStats, error) {
		if !fromRoots {
			return m.CollectGarbage(ctx, o)
		}
		return sandbox.CollectGarbageFrom(ctx, p.blobs, func(ctx context.Context) ([]sandbox.GCRoots, error) {
			r, err := m.GCRoots(ctx)
			return []sandbox.GCRoots{r}, err
		}, o, nil)
	}
	for range 2 {
		if _, err := collect(m); err != nil {
			t.Fatal(err)
		}
	}
	// A new manager: nothing of the volume is in memory any more.
	m.Close(ctx)
	l.Close()
	m, l = durableManager(t, p, d, "n1", time.Second)
	svc, vs = m.For("t"), m.For("t").(api.VolumeService)
	sb, err = svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Volumes: mount})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "sha256sum /data/r2; cat /data/v"})
	if err != nil || got != want {
		t.Fatalf("after GC the volume reads %q (%v), want %q", got, err, want)
	}
	if err := svc.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if err := vs.DeleteVolume(ctx, "data"); err != nil {
		t.Fatal(err)
	}
	var swept int64
	for range 2 {
		st, err := collect(m)
		if err != nil {
			t.Fatal(err)
		}
		swept += st.SweptBytes
	}
	if swept < 300000 {
		t.Errorf("a deleted volume's objects: %d bytes swept, want its data (>= 300000)", swept)
	}
}

// TestVolumeStaleLease: a lease whose holder has no sandbox record (a
// crash between a delete and its release) is taken over by the next
// attach and does not block a delete; a live holder's does.
func TestVolumeStaleLease(t *testing.T) {
	ctx := context.Background()
	p := openParts(t, t.TempDir())
	defer p.close()
	m := newManager(t, p)
	defer m.Close(ctx)
	svc := m.For("t")
	vs := svc.(api.VolumeService)
	vm := any(p.meta).(sandbox.VolumeMeta)
	for _, n := range []string{"a", "b"} {
		if _, err := vs.CreateVolume(ctx, api.VolumeCreate{Name: n, Size: 1 << 20}); err != nil {
			t.Fatal(err)
		}
		if _, err := vm.UpdateVolume(ctx, "t", n, func(r *sandbox.VolumeRecord) error {
			r.Holder, r.Readers = "sb-ghost", []string{"sb-ghost2"}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Volumes: []api.VolumeMount{{Name: "a", Path: "/a"}}})
	if err != nil {
		t.Fatalf("attach over a stale lease: %v", err)
	}
	if v, _ := vs.GetVolume(ctx, "a"); v.AttachedTo != sb.ID {
		t.Errorf("holder after takeover: %+v", v)
	}
	if err := vs.DeleteVolume(ctx, "b"); err != nil {
		t.Errorf("delete with only stale leases: %v", err)
	}
	if err := vs.DeleteVolume(ctx, "a"); err == nil || !strings.Contains(err.Error(), sb.ID) {
		t.Errorf("delete with a live holder: %v", err)
	}
}
