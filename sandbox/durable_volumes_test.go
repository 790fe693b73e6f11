package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// TestDurable_VolumeSandboxSurvivesCrash: a sandbox with a volume keeps its
// own locally acked writes across a crash. Recovery used to mount the
// volume (making its mount point) before replaying the log, so the first
// record no longer applied and every later one was dropped.
func TestDurable_VolumeSandboxSurvivesCrash(t *testing.T) {
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	m1, l1 := durableManager(t, p, d, "node-a", time.Hour)
	svc := m1.For("t")
	ctx := context.Background()
	if _, err := svc.(api.VolumeService).CreateVolume(ctx, api.VolumeCreate{Name: "data", Size: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Volumes: []api.VolumeMount{{Name: "data", Path: "/mnt/d"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"echo own > /tmp/own", "echo vol > /mnt/d/v", "echo more >> /tmp/own"} {
		if _, res, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: s, Durability: api.DurabilityLocal}); err != nil || res.Exit != 0 {
			t.Fatalf("%s: %+v, %v", s, res, err)
		}
	}
	// The crash: m1 is never closed; only its log's file lock goes.
	if err := l1.Close(); err != nil {
		t.Fatal(err)
	}
	m2, l2 := durableManager(t, p, d, "node-a", time.Hour)
	defer l2.Close()
	defer m2.Close(ctx)
	if st := m2.DurableStats(); st.AbandonedRecords != 0 || st.RecoveredRecords == 0 {
		t.Fatalf("recovery: %+v; want records replayed and none abandoned", st)
	}
	out, _, err := execOut(t, m2.For("t"), sb.ID, api.ExecRequest{Script: "cat /tmp/own /mnt/d/v; df /mnt/d | tail -n +2 | wc -l"})
	if want := "own\nmore\nvol\n1\n"; err != nil || out != want {
		t.Fatalf("after the crash: %q, %v; want %q", out, err, want)
	}
}
