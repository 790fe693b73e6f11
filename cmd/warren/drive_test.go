package main

import (
	"context"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// TestE2E_Drives drives a shared drive as a user would, with the CLI
// against a real `warren serve` (its default worker processes): two
// sandboxes mount it (one at create, one at run time), each sees what the
// other closed, renames are atomic, df shows it, the quota holds, the
// mount survives hibernate, and a mounted drive cannot be deleted.
func TestE2E_Drives(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("worker cgroups need root and CI runs as root")
		}
		t.Skip("worker cgroups need root")
	}
	p := startServe(t, t.TempDir(), "--no-native")
	key := p.adminKey(t)
	run := func(wantCode int, args ...string) string {
		t.Helper()
		out, errs, code := p.cli(t, key, "", args...)
		if code != wantCode {
			t.Fatalf("warren %s: exit %d (want %d)\nstdout %q\nstderr %q", strings.Join(args, " "), code, wantCode, out, errs)
		}
		return out + errs
	}
	run(0, "drive", "create", "shared", "--size", "1M")
	if out := run(65, "drive", "create", "shared"); !strings.Contains(out, "already exists") {
		t.Errorf("duplicate create: %q", out)
	}
	if out := run(64, "drive", "create", "Bad Name"); !strings.Contains(out, "drive name") {
		t.Errorf("bad name: %q", out)
	}
	a := strings.TrimSpace(run(0, "sandbox", "create"))
	b := strings.TrimSpace(run(0, "sandbox", "create", "--drive", "shared:/shared"))
	if out := run(66, "sandbox", "mount", a, "nosuch:/x"); !strings.Contains(out, `drive "nosuch" not found`) {
		t.Errorf("mount of a missing drive: %q", out)
	}
	run(0, "sandbox", "mount", a, "shared:/mnt/team")
	if out := run(0, "sandbox", "mounts", a); !regexp.MustCompile(`(?m)^/mnt/team +shared +rw$`).MatchString(out) {
		t.Errorf("mounts:\n%s", out)
	}
	if out := run(65, "sandbox", "mount", a, "shared:/mnt/team/in"); !strings.Contains(out, "overlaps") {
		t.Errorf("nested mount: %q", out)
	}

	// A closes, B opens: B sees the whole file; B renames, A sees it.
	run(0, "sandbox", "exec", a, "-c", "seq 1 1000 > /mnt/team/nums; mkdir /mnt/team/d")
	if out := run(0, "sandbox", "exec", b, "-c", "wc -l < /shared/nums; mv /shared/nums /shared/d/n; ls /shared; ls /shared/d"); out != "1000\nd\nn\n" {
		t.Errorf("B after A's close: %q", out)
	}
	if out := run(0, "sandbox", "exec", a, "-c", "tail -1 /mnt/team/d/n; df -T /mnt/team | tail -1"); !regexp.MustCompile(`^1000\nshared +drive .* /mnt/team\n$`).MatchString(out) {
		t.Errorf("A after B's rename, df:\n%s", out)
	}
	// flock across sandboxes: A's background job holds the lock, B's
	// non-blocking try fails (1) until the job lets go.
	run(0, "sandbox", "exec", a, "-c", "flock /mnt/team/lock sleep 3 &")
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, code := p.cli(t, key, "", "sandbox", "exec", b, "-c", "flock -n /shared/lock true")
		if code == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B never saw A's lock (last exit %d)", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out := run(0, "sandbox", "exec", b, "-c", "flock -w 20 /shared/lock echo got it"); out != "got it\n" {
		t.Errorf("B's blocking flock: %q", out)
	}
	// The quota (1 MiB): a write past it fails at once with ENOSPC; two
	// files that each fit but not together: the second close fails, loudly.
	if out := run(1, "sandbox", "exec", b, "-c", "head -c 2000000 /dev/zero > /shared/big"); !strings.Contains(out, "No space left on device") {
		t.Errorf("over the quota: %q", out)
	}
	out := run(1, "sandbox", "exec", b, "-c", "rm /shared/big; exec 3>/shared/x; head -c 600000 /dev/zero >&3; head -c 600000 /dev/zero > /shared/y; exec 3>&-")
	if !strings.Contains(out, "/shared/x: Drive shared bytes quota exceeded") || !strings.Contains(out, "no space left on device") {
		t.Errorf("a close past the quota: %q", out)
	}
	// The refused close left x as its open made it (empty); y is whole.
	if out := run(0, "sandbox", "exec", a, "-c", "ls /mnt/team; wc -c < /mnt/team/x; wc -c < /mnt/team/y"); out != "d\nlock\nx\ny\n0\n600000\n" {
		t.Errorf("after the refused close: %q", out)
	}
	// Writes under the mount are not the sandbox's own: a fork lacks both
	// the mount and its files.
	fork := strings.TrimSpace(run(0, "sandbox", "fork", a))
	if out := run(0, "sandbox", "exec", fork, "-c", "ls /mnt/team | wc -l"); strings.TrimSpace(out) != "0" {
		t.Errorf("a fork sees the drive's files: %q", out)
	}
	// The mount is the sandbox's state: it survives hibernate.
	run(0, "sandbox", "hibernate", a)
	if out := run(0, "sandbox", "exec", a, "-c", "cat /mnt/team/d/n | wc -l"); strings.TrimSpace(out) != "1000" {
		t.Errorf("after hibernate: %q", out)
	}
	if out := run(0, "sandbox", "get", a); !strings.Contains(out, "shared:/mnt/team") {
		t.Errorf("get does not show the drive:\n%s", out)
	}
	if out := run(65, "drive", "rm", "shared"); !strings.Contains(out, "is mounted") {
		t.Errorf("rm of a mounted drive: %q", out)
	}
	// Unmount while a background job has a file open there: the job's
	// handle keeps working, but what it had not closed is not committed
	// (README "Drives"); the sandbox goes on.
	run(0, "sandbox", "exec", a, "-c", "(sleep 1; echo late) > /mnt/team/late &")
	run(0, "sandbox", "umount", a, "/mnt/team")
	run(0, "sandbox", "exec", a, "-c", "sleep 2; jobs")
	run(0, "sandbox", "mount", a, "shared:/mnt/team")
	if out := run(0, "sandbox", "exec", a, "-c", "wc -c < /mnt/team/late"); strings.TrimSpace(out) != "0" {
		t.Errorf("a file open at unmount: %q, want it as its open left it (empty)", out)
	}
	run(0, "sandbox", "umount", a, "/mnt/team")
	run(0, "sandbox", "rm", b)
	if out := run(0, "sandbox", "exec", a, "-c", "ls /mnt/team | wc -l"); strings.TrimSpace(out) != "0" {
		t.Errorf("after umount: %q", out)
	}
	if out := run(0, "drive", "ls"); !regexp.MustCompile(`(?m)^shared +1M +`).MatchString(out) {
		t.Errorf("drive ls:\n%s", out)
	}
	run(0, "drive", "rm", "shared")
	if out := run(66, "drive", "get", "shared"); !strings.Contains(out, "not found") {
		t.Errorf("after rm: %q", out)
	}
}

// TestE2E_DriveFleet: two `warren serve` nodes on one PostgreSQL and one
// versitygw; a sandbox on each mounts the same drive, and each sees what
// the other closed (close-to-open across nodes), through either node.
func TestE2E_DriveFleet(t *testing.T) {
	f := startFleet(t, 2)
	ctx := context.Background()
	c0, c1 := f.client(t, 0), f.client(t, 1)
	if _, err := c0.CreateDrive(ctx, api.DriveCreate{Name: "team"}); err != nil {
		t.Fatal(err)
	}
	if ds, err := c1.ListDrives(ctx); err != nil || len(ds) != 1 || ds[0].Name != "team" {
		t.Fatalf("node1 lists %+v, %v", ds, err)
	}
	m := []api.DriveMount{{Drive: "team", Path: "/team"}}
	s0 := f.createOn(t, 0, 0, api.CreateRequest{Drives: m})
	s1 := f.createOn(t, 1, 1, api.CreateRequest{})
	// The mount goes through node0 to s1's owner, node1.
	if ms, err := c0.MountDrive(ctx, s1.ID, m[0]); err != nil || len(ms) != 1 {
		t.Fatalf("mount via node0: %+v, %v", ms, err)
	}
	exec := func(c interface {
		Exec(context.Context, string, api.ExecRequest, io.Writer, io.Writer) (api.ExecResult, error)
	}, id, script string) string {
		t.Helper()
		var out strings.Builder
		res, err := c.Exec(ctx, id, api.ExecRequest{Script: script}, &out, &out)
		if err != nil || res.Exit != 0 {
			t.Fatalf("%s: %q: %+v, %v", id, script, res, err)
		}
		return out.String()
	}
	for i := range 20 {
		exec(c0, s0.ID, "echo "+strconv.Itoa(i)+" > /team/tmp && mv /team/tmp /team/v")
		if got := exec(c1, s1.ID, "cat /team/v"); got != strconv.Itoa(i)+"\n" {
			t.Fatalf("round %d: node1 reads %q after node0's rename", i, got)
		}
		exec(c1, s1.ID, "echo back"+strconv.Itoa(i)+" >> /team/log")
		if got := exec(c0, s0.ID, "tail -1 /team/log"); got != "back"+strconv.Itoa(i)+"\n" {
			t.Fatalf("round %d: node0 reads %q after node1's append", i, got)
		}
	}
}

// TestE2E_MountsFleetTakeover: a sandbox with a volume and a drive on
// node0 of a 2-node fleet; node0 is killed with -9; node1 takes the
// sandbox over, and it comes back with both mounts and their data: the
// volume's committed writes and the drive's closed files.
func TestE2E_MountsFleetTakeover(t *testing.T) {
	f := startFleet(t, 2)
	ctx := context.Background()
	c1 := f.client(t, 1)
	vs := f.client(t, 0)
	if _, err := vs.CreateVolume(ctx, api.VolumeCreate{Name: "data", Size: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := vs.CreateDrive(ctx, api.DriveCreate{Name: "team"}); err != nil {
		t.Fatal(err)
	}
	sb := f.createOn(t, 0, 0, api.CreateRequest{
		Volumes: []api.VolumeMount{{Name: "data", Path: "/data"}},
		Drives:  []api.DriveMount{{Drive: "team", Path: "/team"}},
	})
	if res, err := c1.ExecWait(ctx, sb.ID, api.ExecRequest{Script: "echo vol > /data/v; echo drv > /team/d; echo own > /own", Durability: api.DurabilityCommitted}); err != nil || res.Exit != 0 {
		t.Fatalf("writes: %+v %v", res, err)
	}
	if err := f.nodes[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-f.nodes[0].done
	out, _ := execRetry(t, c1, sb.ID, "cat /data/v /team/d /own", 20*time.Second)
	if out != "vol\ndrv\nown\n" {
		t.Fatalf("after the takeover: %q", out)
	}
	got, err := c1.Get(ctx, sb.ID)
	if err != nil || got.Node != f.ids[1] || len(got.Volumes) != 1 || len(got.Drives) != 1 {
		t.Fatalf("after the takeover: %+v, %v", got, err)
	}
	if v, err := c1.GetVolume(ctx, "data"); err != nil || v.AttachedTo != sb.ID {
		t.Fatalf("volume after the takeover: %+v, %v", v, err)
	}
}
