package workerpool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/client"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/boltmeta"
	"github.com/warren-sandbox/warren/sandbox/node"
)

func volumeWorkerOf(p *Pool, tenant, name string) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if i, ok := p.vols[[2]string{tenant, name}]; ok {
		return i
	}
	return -1
}

// direct is tenant's client of worker i itself, past the router (to lay
// records out as the router never would).
func direct(t *testing.T, p *Pool, i int, tenant string) api.VolumeService {
	t.Helper()
	svc, _, err := p.workers[i].service(tenant)
	if err != nil {
		t.Fatal(err)
	}
	return svc.(*client.Client)
}

// TestVolumes: volumes through HTTP -> front -> router -> two workers. A
// volume lives on one worker and its sandboxes are placed there; the data
// outlives a sandbox and a SIGKILL of the worker; one read-write holder
// (409 naming it); a tenant's volumes stay on one worker; names are unique
// across workers; lists merge (503 while a worker is down); records on two
// workers are a 409 naming them; lookups work after the router forgets.
func TestVolumes(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	p := openPool(t, testOptions(t, 2))
	f := newFront(t, p)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	if _, err := a.CreateVolume(ctx, api.VolumeCreate{Name: "data", Size: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	vw := volumeWorkerOf(p, "a", "data")
	if vw < 0 {
		t.Fatal("the router did not note the volume's worker")
	}
	other := 1 - vw
	mount := []api.VolumeMount{{Name: "data", Path: "/data"}}
	s1, err := a.Create(ctx, api.CreateRequest{Volumes: mount})
	if err != nil {
		t.Fatal(err)
	}
	if w := workerOf(p, s1.ID); w != vw {
		t.Fatalf("sandbox with the volume on worker %d, volume on %d", w, vw)
	}
	if out, st := sh(t, a, s1.ID, "echo kept > /data/f; cat /data/f"); out != "kept\n" || st != 0 {
		t.Fatalf("write: %q %d", out, st)
	}
	// Even with the tenant's home on the other worker, sandboxes that
	// mount the volume and the tenant's next volume go to the volume's.
	p.mu.Lock()
	p.home["a"] = other
	p.mu.Unlock()
	_, err = a.Create(ctx, api.CreateRequest{Volumes: mount})
	if !errdefs.IsConflict(err) || !strings.Contains(err.Error(), `volume "data" is attached read-write to sandbox `+s1.ID) {
		t.Fatalf("second read-write attach: %v; want 409 naming %s", err, s1.ID)
	}
	ro, err := a.Create(ctx, api.CreateRequest{Volumes: []api.VolumeMount{{Name: "data", Path: "/ro", ReadOnly: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if w := workerOf(p, ro.ID); w != vw {
		t.Fatalf("read-only attach on worker %d, volume on %d", w, vw)
	}
	if out, st := sh(t, a, ro.ID, "cat /ro/f; echo x > /ro/g"); out != "kept\n" || st == 0 {
		t.Fatalf("read-only attach: %q exit %d; want the data and a failed write", out, st)
	}
	if _, err := a.CreateVolume(ctx, api.VolumeCreate{Name: "logs", Size: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if w := volumeWorkerOf(p, "a", "logs"); w != vw {
		t.Fatalf("the tenant's second volume on worker %d, its first on %d", w, vw)
	}
	// Bad input is the worker's answer, unchanged.
	for _, c := range []struct {
		vs   []api.VolumeMount
		want error
	}{
		{[]api.VolumeMount{{Name: "data", Path: "rel"}}, api.ErrUnprocessable},
		{[]api.VolumeMount{{Name: "logs", Path: "/a"}, {Name: "nope", Path: "/a/b"}}, api.ErrUnprocessable},
		{[]api.VolumeMount{{Name: "nope", Path: "/n"}}, errdefs.ErrNotFound},
	} {
		if _, err := a.Create(ctx, api.CreateRequest{Volumes: c.vs}); !errors.Is(err, c.want) {
			t.Errorf("create with %+v: %v; want %v", c.vs, err, c.want)
		}
	}
	if _, err := a.CreateVolume(ctx, api.VolumeCreate{Name: "Bad/Name", Size: 1}); !errors.Is(err, api.ErrUnprocessable) {
		t.Errorf("bad name: %v; want 422", err)
	}
	// Grow-only resize and no delete while attached, on the volume's worker.
	if _, err := a.ResizeVolume(ctx, "data", 1<<10); !errors.Is(err, api.ErrUnprocessable) || !strings.Contains(err.Error(), "shrinking") {
		t.Errorf("shrink: %v", err)
	}
	if v, err := a.ResizeVolume(ctx, "data", 4<<20); err != nil || v.Size != 4<<20 {
		t.Errorf("grow: %+v %v", v, err)
	}
	if err := a.WriteFile(ctx, s1.ID, api.WriteFileRequest{Path: "/data/big", Data: strings.NewReader(strings.Repeat("x", 2<<20))}); err != nil {
		t.Errorf("a write the grown quota holds: %v", err)
	}
	if err := a.DeleteVolume(ctx, "data"); !errdefs.IsConflict(err) || !strings.Contains(err.Error(), s1.ID) {
		t.Errorf("delete while attached: %v", err)
	}
	if v, err := a.GetVolume(ctx, "data"); err != nil || v.AttachedTo != s1.ID || v.Used < 2<<20 || len(v.Readers) != 1 {
		t.Errorf("get: %+v %v; want held by %s with 2 MiB used and one reader", v, err, s1.ID)
	}

	// A name another worker already has is refused, although the tenant's
	// volumes are on this one; a list merges both workers.
	if _, err := direct(t, p, other, "a").CreateVolume(ctx, api.VolumeCreate{Name: "elsewhere", Size: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateVolume(ctx, api.VolumeCreate{Name: "elsewhere", Size: 1 << 20}); !errdefs.IsAlreadyExists(err) || !strings.Contains(err.Error(), `volume "elsewhere" already exists`) {
		t.Fatalf("a name held by the other worker: %v; want already exists", err)
	}
	if _, err := a.CreateVolume(ctx, api.VolumeCreate{Name: "elsewhere", Size: 0}); !errors.Is(err, api.ErrUnprocessable) {
		t.Fatalf("a taken name with a bad size: %v; want 422 (the size first, as in process)", err)
	}
	vs, err := a.ListVolumes(ctx)
	if names := volumeNames(vs); err != nil || names != "data elsewhere logs" {
		t.Fatalf("list = %q, %v; want data elsewhere logs", names, err)
	}
	// A sandbox cannot mount records of two workers.
	_, err = a.Create(ctx, api.CreateRequest{Volumes: []api.VolumeMount{{Name: "logs", Path: "/l"}, {Name: "elsewhere", Path: "/e"}}})
	if !errdefs.IsConflict(err) || !strings.Contains(err.Error(), `volume "logs" on worker `) || !strings.Contains(err.Error(), `volume "elsewhere" on worker `) {
		t.Fatalf("volumes on two workers: %v; want 409 naming both and their workers", err)
	}
	if v, _ := a.GetVolume(ctx, "logs"); v.AttachedTo != "" {
		t.Fatalf("a refused create left a lease: %+v", v)
	}
	if err := a.DeleteVolume(ctx, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	if _, err := direct(t, p, other, "a").GetVolume(ctx, "elsewhere"); !errdefs.IsNotFound(err) {
		t.Fatalf("deleted through the router, still on its worker: %v", err)
	}
	// Tenants apart, on any worker.
	if _, err := b.CreateVolume(ctx, api.VolumeCreate{Name: "data", Size: 1 << 10}); err != nil {
		t.Fatalf("tenant b's own volume of the same name: %v", err)
	}
	if vs, err := b.ListVolumes(ctx); err != nil || volumeNames(vs) != "data" || vs[0].Size != 1<<10 {
		t.Fatalf("tenant b lists %+v, %v", vs, err)
	}

	// The sandbox goes, the volume stays; a new one (found after the
	// router forgot every placement) reads it.
	if err := a.Delete(ctx, s1.ID); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.where, p.vols = map[string]int{}, map[[2]string]int{}
	p.mu.Unlock()
	s2, err := a.Create(ctx, api.CreateRequest{Volumes: []api.VolumeMount{{Name: "data", Path: "/mnt/d"}}, StandbyAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := sh(t, a, s2.ID, "cat /mnt/d/f; wc -c < /mnt/d/big; echo after > /mnt/d/g"); out != "kept\n2097152\n" {
		t.Fatalf("a new sandbox reads %q", out)
	}

	// SIGKILL the volume's worker: lists and creates answer 503 while it
	// is down; once it is back the holder and the volume are there.
	w := p.workers[vw]
	w.mu.Lock()
	gen := w.gen
	w.mu.Unlock()
	gen.cmd.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); w.up(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed worker still counts as up")
		}
	}
	if _, err := a.ListVolumes(ctx); !errdefs.IsUnavailable(err) {
		t.Errorf("list while a worker is down: %v; want 503", err)
	}
	if _, err := a.CreateVolume(ctx, api.VolumeCreate{Name: "while-down", Size: 1 << 20}); !errdefs.IsUnavailable(err) {
		t.Errorf("create while a worker is down: %v; want 503 (the name cannot be checked)", err)
	}
	waitRestarts(t, p, vw, 1)
	if out, _ := sh(t, a, s2.ID, "cat /mnt/d/f /mnt/d/g"); out != "kept\nafter\n" {
		t.Fatalf("after the worker's SIGKILL the holder reads %q", out)
	}
	if v, err := a.GetVolume(ctx, "data"); err != nil || v.AttachedTo != s2.ID || v.Generation == 0 {
		t.Fatalf("after the worker's restart: %+v %v", v, err)
	}
	if err := a.Delete(ctx, s2.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, ro.ID); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"data", "logs"} {
		if err := a.DeleteVolume(ctx, n); err != nil {
			t.Fatalf("delete %s: %v", n, err)
		}
	}
	if vs, err := a.ListVolumes(ctx); err != nil || len(vs) != 0 {
		t.Fatalf("list after delete: %+v %v", vs, err)
	}
}

func volumeNames(vs []api.Volume) string {
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	return strings.Join(names, " ")
}

// TestAdopt_Volumes: a volume (and the sandbox holding it) on worker 1
// survives --workers 2 -> 1 -> 0: its record moves with the sandbox's,
// the holder keeps its lease, and a new sandbox reads the data.
func TestAdopt_Volumes(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	o := testOptions(t, 2)
	o.NoCgroup = true
	data := o.Data
	p, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.home["t"] = 1
	p.mu.Unlock()
	svc := p.For("t")
	vs := svc.(api.VolumeService)
	if _, err := vs.CreateVolume(ctx, api.VolumeCreate{Name: "data", Size: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	holder, err := svc.Create(ctx, api.CreateRequest{Volumes: []api.VolumeMount{{Name: "data", Path: "/data"}}})
	if err != nil {
		t.Fatal(err)
	}
	if w, vw := workerOf(p, holder.ID), volumeWorkerOf(p, "t", "data"); w != 1 || vw != 1 {
		t.Fatalf("sandbox on worker %d, volume on %d; want both on 1", w, vw)
	}
	sh(t, svc, holder.ID, "echo two > /data/f")
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	o.Workers = 1
	if err := Adopt(ctx, data, 1); err != nil {
		t.Fatal(err)
	}
	if p, err = Open(ctx, o); err != nil {
		t.Fatal(err)
	}
	svc, vs = p.For("t"), p.For("t").(api.VolumeService)
	if v, err := vs.GetVolume(ctx, "data"); err != nil || v.AttachedTo != holder.ID {
		t.Fatalf("after --workers 1: %+v %v; want held by %s", v, err, holder.ID)
	}
	if out, _ := sh(t, svc, holder.ID, "cat /data/f; echo one >> /data/f"); out != "two\n" {
		t.Fatalf("the holder after --workers 1 reads %q", out)
	}
	if _, err := svc.Create(ctx, api.CreateRequest{Volumes: []api.VolumeMount{{Name: "data", Path: "/data"}}}); !errdefs.IsConflict(err) {
		t.Fatalf("second attach after the move: %v; want 409 (the lease moved with the record)", err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := Adopt(ctx, data, 0); err != nil {
		t.Fatal(err)
	}
	n, err := node.Open(ctx, node.Options{Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(ctx)
	svc = n.Manager.For("t")
	if err := svc.Delete(ctx, holder.ID); err != nil {
		t.Fatal(err)
	}
	sb, err := svc.Create(ctx, api.CreateRequest{Volumes: []api.VolumeMount{{Name: "data", Path: "/v"}}})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := sh(t, svc, sb.ID, "cat /v/f"); out != "two\none\n" {
		t.Fatalf("in process after --workers 0: %q", out)
	}
}

// TestAdopt_VolumeClash: a record already at the destination is kept when
// it is the same one (a move cut short) and stops Adopt, naming both
// files, when it differs; nothing is deleted then.
func TestAdopt_VolumeClash(t *testing.T) {
	ctx := context.Background()
	rec := sandbox.VolumeRecord{Tenant: "t", Name: "data", Size: 1 << 20, Ref: "ref-a", Generation: 3, CreatedAt: time.Now()}
	for _, c := range []struct {
		name string
		dst  sandbox.VolumeRecord
		want string // "" = no error
	}{
		{"same", rec, ""},
		{"different", func() sandbox.VolumeRecord { r := rec; r.Ref, r.Generation = "ref-b", 4; return r }(), "with different heads"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			put := func(path string, r sandbox.VolumeRecord) {
				db, err := boltmeta.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := db.CreateVolume(ctx, r); err != nil {
					t.Fatal(err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			src, dst := filepath.Join(data, "workers", "w1", "meta.db"), filepath.Join(data, "workers", "w0", "meta.db")
			for _, d := range []string{filepath.Dir(src), filepath.Dir(dst)} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			put(src, rec)
			put(dst, c.dst)
			err := Adopt(ctx, data, 1)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), src) || !strings.Contains(err.Error(), dst) {
				t.Fatalf("Adopt: %v; want an error saying %q naming both files", err, c.want)
			}
			count := func(path string) int {
				db, err := boltmeta.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				vs, err := db.ListVolumes(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return len(vs)
			}
			wantSrc := 0
			if c.want != "" {
				wantSrc = 1
			}
			if n, m := count(src), count(dst); n != wantSrc || m != 1 {
				t.Fatalf("after Adopt: %d records in the source, %d in the destination; want %d and 1", n, m, wantSrc)
			}
		})
	}
}
