package main

import (
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2E_Volumes drives volumes as a user would, with the CLI against a
// real `warren serve`: the data outlives its sandbox, a restart and a
// SIGKILL after the call that wrote it answered; one read-write holder;
// the quota and grow-only resize; no delete while attached.
// It runs in process (--workers 0) and with serve's default worker
// processes, where a volume's record and its sandboxes are on one worker
// and the SIGKILL goes to the workers.
func TestE2E_Volumes(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"in-process", []string{"--no-native", "--workers", "0"}},
		{"default-workers", []string{"--no-native"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name != "in-process" && os.Geteuid() != 0 {
				if os.Getenv("CI") != "" {
					t.Fatal("worker cgroups need root and CI runs as root")
				}
				t.Skip("worker cgroups need root")
			}
			e2eVolumes(t, c.args)
		})
	}
}

func e2eVolumes(t *testing.T, serveArgs []string) {
	dir := t.TempDir()
	inProcess := slices.Contains(serveArgs, "--workers")
	p := startServe(t, dir, serveArgs...)
	if !inProcess && !strings.Contains(p.header, "(2 workers)") {
		t.Fatalf("serve without --workers does not run its 2 workers:\n%s", p.header)
	}
	key := p.adminKey(t)
	run := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		out, errs, code := p.cli(t, key, "", args...)
		if code != wantCode {
			t.Fatalf("warren %s: exit %d (want %d)\nstdout %q\nstderr %q", strings.Join(args, " "), code, wantCode, out, errs)
		}
		return out, errs
	}
	refuse := func(args ...string) (string, string) {
		t.Helper()
		out, errs, code := p.cli(t, key, "", args...)
		if code == 0 {
			t.Fatalf("warren %s succeeded; want a refusal\nstdout %q", strings.Join(args, " "), out)
		}
		return out, errs
	}
	run(0, "volume", "create", "data", "--size", "1M")
	if _, errs := refuse("volume", "create", "data", "--size", "1M"); !strings.Contains(errs, `volume "data" already exists`) {
		t.Errorf("duplicate create: %q", errs)
	}
	out, _ := run(0, "sandbox", "create", "--volume", "data:/data")
	a := strings.TrimSpace(out)
	out, _ = run(0, "sandbox", "exec", a, "-c", "echo kept > /data/f; mkdir /data/d; echo own > /own; df -h; ls /")
	if !regexp.MustCompile(`(?m)^data +1\.0M .* /data$`).MatchString(out) || !strings.Contains(out, "data\n") {
		t.Errorf("df and ls do not show the mount:\n%s", out)
	}

	// A second read-write attach is refused naming the holder (409);
	// read-only attaches are fine.
	_, errs := refuse("sandbox", "create", "--volume", "data:/data")
	if !strings.Contains(errs, `volume "data" is attached read-write to sandbox `+a) {
		t.Errorf("second attach: %q", errs)
	}
	req, _ := http.NewRequest("POST", p.url+"/v1/sandboxes", strings.NewReader(`{"volumes":[{"name":"data","path":"/v"}]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("second read-write attach over HTTP: %d, want 409", resp.StatusCode)
	}
	out, _ = run(0, "sandbox", "create", "--volume", "data:/ro:ro")
	ro := strings.TrimSpace(out)
	out, _ = run(1, "sandbox", "exec", ro, "-c", "cat /ro/f; echo x > /ro/g")
	if out != "kept\n" {
		t.Errorf("read-only attach reads %q", out)
	}

	// Across the mount boundary mv copies and removes; the quota holds.
	out, errs = run(1, "sandbox", "exec", a, "-c", "mv /own /data/own && cat /data/own && ls /own; head -c 2000000 /dev/zero > /data/big")
	if out != "own\n" || !strings.Contains(errs, "No space left on device") {
		t.Errorf("mv across / quota: stdout %q stderr %q", out, errs)
	}
	run(0, "sandbox", "exec", a, "-c", "rm /data/big")

	// Grow-only resize; no delete while attached.
	if _, errs := refuse("volume", "resize", "data", "512K"); !strings.Contains(errs, "shrinking") {
		t.Errorf("shrink: %q", errs)
	}
	run(0, "volume", "resize", "data", "4M")
	run(0, "sandbox", "exec", a, "-c", "head -c 2000000 /dev/zero > /data/big")
	if _, errs := refuse("volume", "rm", "data"); !strings.Contains(errs, "attached") {
		t.Errorf("rm while attached: %q", errs)
	}

	// The sandbox goes; its volume stays and a new sandbox reads it.
	run(0, "sandbox", "rm", a, ro)
	out, _ = run(0, "sandbox", "create", "--volume", "data:/mnt/data")
	b := strings.TrimSpace(out)
	out, _ = run(0, "sandbox", "exec", b, "-c", "cat /mnt/data/f /mnt/data/own; ls /mnt/data; wc -c < /mnt/data/big; ls /own 2>&1; true")
	if out != "kept\nown\nbig\nd\nf\nown\n2000000\nls: cannot access '/own': No such file or directory\n" {
		t.Errorf("a new sandbox reads %q", out)
	}
	out, _ = run(0, "volume", "ls")
	if !regexp.MustCompile(`(?m)^data +4M +.* ` + b + ` `).MatchString(out) {
		t.Errorf("volume ls:\n%s", out)
	}

	if out, _ = run(0, "sandbox", "get", b); !regexp.MustCompile(`(?m)^volumes: +data:/mnt/data$`).MatchString(out) {
		t.Errorf("sandbox get does not list the volume:\n%s", out)
	}

	// Hibernate drops the tree and resume mounts the committed one again;
	// a fork starts without the volume (an empty mount point of its own).
	run(0, "sandbox", "hibernate", b)
	if out, _ = run(0, "sandbox", "exec", b, "-c", "cat /mnt/data/f"); out != "kept\n" {
		t.Errorf("after hibernate: %q", out)
	}
	out, _ = run(0, "sandbox", "fork", b)
	child := strings.Fields(out)[0]
	if out, _ = run(0, "sandbox", "exec", child, "-c", "ls -A /mnt/data | wc -l; echo mine > /mnt/data/child; df | grep -c /mnt/data; true"); out != "0\n0\n" {
		t.Errorf("a fork sees %q under the mount point, want nothing and no mount", out)
	}
	if out, _ = run(0, "sandbox", "exec", b, "-c", "ls /mnt/data"); strings.Contains(out, "child") {
		t.Errorf("a fork's write reached the volume: %q", out)
	}
	run(0, "sandbox", "rm", child)

	// A clean restart of serve keeps it (the sandbox hibernates, its
	// volume commits), and the holder keeps its lease.
	p.stop(t)
	p = startServe(t, dir, serveArgs...)
	out, _ = run(0, "sandbox", "exec", b, "-c", "cat /mnt/data/f; echo after-restart > /mnt/data/g")
	if out != "kept\n" {
		t.Errorf("after a restart: %q", out)
	}
	// The call answered: the write is committed, so a SIGKILL keeps it
	// (of serve in process; of every worker, which serve restarts).
	if inProcess {
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.done
		p = startServe(t, dir, serveArgs...)
	} else {
		for i := range 2 {
			if err := syscall.Kill(workerPID(t, p.cmd.Process.Pid, i).pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if _, errs, code := p.cli(t, key, "", "volume", "ls"); code == 0 {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("the workers are not back after their SIGKILL: %s", errs)
			}
		}
	}
	run(0, "sandbox", "rm", b)
	out, _ = run(0, "sandbox", "create", "--volume", "data:/data")
	c := strings.TrimSpace(out)
	out, _ = run(0, "sandbox", "exec", c, "-c", "cat /data/g")
	if out != "after-restart\n" {
		t.Errorf("after SIGKILL: %q", out)
	}
	run(0, "sandbox", "rm", c)
	run(0, "volume", "rm", "data")
	out, _ = run(0, "volume", "ls")
	if strings.Contains(out, "data") {
		t.Errorf("volume still listed after rm:\n%s", out)
	}
}
