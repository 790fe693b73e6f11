package metatest

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/sandbox"
)

func volumes(t *testing.T, m sandbox.DurableMeta) sandbox.VolumeMeta {
	t.Helper()
	vm, ok := m.(sandbox.VolumeMeta)
	if !ok {
		t.Skipf("%T does not implement sandbox.VolumeMeta yet", m)
	}
	return vm
}

func testVolumeRoundTrip(t *testing.T, f Fixture) {
	vm := volumes(t, f.Meta)
	at := time.Date(2026, 12, 2, 7, 0, 0, 123456789, time.FixedZone("x", 3600))
	for _, v := range []sandbox.VolumeRecord{
		{Tenant: "t2", Name: "a", Size: 10, CreatedAt: at},
		{Tenant: "t1", Name: "b", Size: 20, CreatedAt: at},
		{Tenant: "t1", Name: "a", Size: 30, CreatedAt: at},
	} {
		must(t, vm.CreateVolume(ctx, v), "create %s/%s", v.Tenant, v.Name)
	}
	err := vm.CreateVolume(ctx, sandbox.VolumeRecord{Tenant: "t1", Name: "a", Size: 99})
	if !errdefs.IsAlreadyExists(err) {
		t.Fatalf("duplicate create: %v, want already exists", err)
	}
	got, err := vm.GetVolume(ctx, "t1", "a")
	must(t, err, "get")
	want := sandbox.VolumeRecord{Tenant: "t1", Name: "a", Size: 30, CreatedAt: sandbox.StoreTime(at)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("get = %+v, want %+v (the duplicate must change nothing)", got, want)
	}
	all, err := vm.ListVolumes(ctx)
	must(t, err, "list")
	var keys []string
	for _, v := range all {
		keys = append(keys, v.Tenant+"/"+v.Name)
	}
	if !reflect.DeepEqual(keys, []string{"t1/a", "t1/b", "t2/a"}) {
		t.Errorf("list order %v", keys)
	}
	if _, err := vm.GetVolume(ctx, "t1", "nope"); !errdefs.IsNotFound(err) {
		t.Errorf("get missing: %v", err)
	}
	if _, err := vm.UpdateVolume(ctx, "t1", "nope", func(*sandbox.VolumeRecord) error { return nil }); !errdefs.IsNotFound(err) {
		t.Errorf("update missing: %v", err)
	}
	if err := vm.DeleteVolume(ctx, "t1", "nope", nil); !errdefs.IsNotFound(err) {
		t.Errorf("delete missing: %v", err)
	}
}

func testVolumeUpdateDelete(t *testing.T, f Fixture) {
	vm := volumes(t, f.Meta)
	must(t, vm.CreateVolume(ctx, sandbox.VolumeRecord{Tenant: "t", Name: "v", Size: 10}), "create")
	v, err := vm.UpdateVolume(ctx, "t", "v", func(r *sandbox.VolumeRecord) error {
		r.Holder, r.Ref, r.Generation, r.Used = "sb-1", "ref1", 1, 5
		r.Readers = append(r.Readers, "sb-2")
		r.Name, r.Tenant = "renamed", "other" // ignored
		return nil
	})
	must(t, err, "update")
	if v.Name != "v" || v.Tenant != "t" || v.Holder != "sb-1" || v.Ref != "ref1" {
		t.Errorf("update returned %+v", v)
	}
	refused := errors.New("refused")
	if _, err := vm.UpdateVolume(ctx, "t", "v", func(r *sandbox.VolumeRecord) error {
		r.Holder = "sb-3"
		return refused
	}); !errors.Is(err, refused) {
		t.Errorf("update error = %v, want fn's", err)
	}
	got, err := vm.GetVolume(ctx, "t", "v")
	must(t, err, "get")
	if got.Holder != "sb-1" || got.Generation != 1 || !reflect.DeepEqual(got.Readers, []string{"sb-2"}) {
		t.Errorf("after a refused update: %+v", got)
	}
	if err := vm.DeleteVolume(ctx, "t", "v", func(r sandbox.VolumeRecord) error {
		if r.Holder != "" {
			return refused
		}
		return nil
	}); !errors.Is(err, refused) {
		t.Errorf("delete while held = %v", err)
	}
	if _, err := vm.GetVolume(ctx, "t", "v"); err != nil {
		t.Errorf("a refused delete deleted: %v", err)
	}
	must(t, vm.DeleteVolume(ctx, "t", "v", nil), "delete")
	if _, err := vm.GetVolume(ctx, "t", "v"); !errdefs.IsNotFound(err) {
		t.Errorf("after delete: %v", err)
	}
	if f.Reopen != nil {
		must(t, vm.CreateVolume(ctx, sandbox.VolumeRecord{Tenant: "t", Name: "kept", Size: 7}), "create")
		if _, err := vm.UpdateVolume(ctx, "t", "kept", func(r *sandbox.VolumeRecord) error { r.Ref = "r"; return nil }); err != nil {
			t.Fatal(err)
		}
		vm2 := volumes(t, f.Reopen(t))
		got, err := vm2.GetVolume(ctx, "t", "kept")
		if err != nil || got.Ref != "r" || got.Size != 7 {
			t.Errorf("after reopen: %+v, %v", got, err)
		}
	}
}

// testVolumeLeaseRace: goroutines (over two handles when there is a peer)
// race to take a free volume's read-write lease with UpdateVolume; exactly
// one wins.
func testVolumeLeaseRace(t *testing.T, f Fixture) {
	const n = 16
	hs := racers(t, f)
	must(t, volumes(t, f.Meta).CreateVolume(ctx, sandbox.VolumeRecord{Tenant: "t", Name: "v", Size: 1}), "create")
	busy := errors.New("busy")
	var wg sync.WaitGroup
	wins := make([]bool, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := volumes(t, hs[i%len(hs)]).UpdateVolume(ctx, "t", "v", func(r *sandbox.VolumeRecord) error {
				if r.Holder != "" {
					return busy
				}
				r.Holder = "sb-" + string(rune('a'+i))
				return nil
			})
			wins[i], errs[i] = err == nil, err
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for i := range n {
		if wins[i] {
			won++
		} else if !errors.Is(errs[i], busy) {
			t.Errorf("racer %d: %v", i, errs[i])
		}
	}
	if won != 1 {
		t.Errorf("%d racers took the lease, want 1", won)
	}
}
