package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/drive"
	driveboltmeta "github.com/warren-sandbox/warren/drive/boltmeta"
	"github.com/warren-sandbox/warren/sandbox"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// TestDriveDeletedWhileStandingBy: a sandbox in standby holds no mount
// lease, so its drive can be deleted; its resume then fails saying how to
// get it back, and after the unmount it resumes with its own files.
func TestDriveDeletedWhileStandingBy(t *testing.T) {
	ctx := context.Background()
	d := t.TempDir()
	p := openParts(t, d)
	defer p.close()
	dm, err := driveboltmeta.Open(d+"/drives.db", driveboltmeta.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dm.Close()
	m, err := sandbox.New(ctx, sandbox.Config{
		Blobs: p.blobs, Deltas: sandbox.VFSDeltas(p.blobs), Images: sandbox.CatalogImages(p.cat),
		Interpreters: sandbox.ShellInterpreters(node.Commands()), Meta: p.meta,
		Drives: drive.NewRegistry(dm, p.blobs, drive.Options{SpillDir: t.TempDir()}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	svc := m.For("t")
	ds := svc.(api.DriveService)
	if _, err := ds.CreateDrive(ctx, api.DriveCreate{Name: "team"}); err != nil {
		t.Fatal(err)
	}
	sb, err := svc.Create(ctx, api.CreateRequest{StandbyAfter: -1, Drives: []api.DriveMount{{Drive: "team", Path: "/team"}}})
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "echo own > /own; echo shared > /team/f; cat /team/f"}); err != nil || out != "shared\n" {
		t.Fatalf("exec: %q %v", out, err)
	}
	if err := ds.DeleteDrive(ctx, "team"); err == nil || !strings.Contains(err.Error(), "is mounted") {
		t.Fatalf("delete of a mounted drive: %v", err)
	}
	if _, err := svc.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if err := ds.DeleteDrive(ctx, "team"); err != nil {
		t.Fatalf("delete once no sandbox runs with it: %v", err)
	}
	_, _, err = execOut(t, svc, sb.ID, api.ExecRequest{Script: "cat /own"})
	if err == nil || !strings.Contains(err.Error(), `drive "team" mounted at /team no longer exists: unmount it (warren sandbox umount `+sb.ID+" /team)") {
		t.Fatalf("resume with its drive gone: %v", err)
	}
	if ms, err := ds.UnmountDrive(ctx, sb.ID, "/team"); err != nil || len(ms) != 0 {
		t.Fatalf("unmount in standby: %+v %v", ms, err)
	}
	if out, _, err := execOut(t, svc, sb.ID, api.ExecRequest{Script: "cat /own; ls /team | wc -l"}); err != nil || out != "own\n0\n" {
		t.Fatalf("after the unmount: %q %v", out, err)
	}
}
