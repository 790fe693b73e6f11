// Package debiantest gives tests a real Debian bookworm root filesystem and
// its EROFS image, debootstrapped once per machine and cached (the first
// build downloads ~250 MB and takes about a minute; later runs reuse it).
// The tree holds what agents reach for in the native tier: python3 + pip,
// git, gcc + libc headers, and CA certificates.
//
// Without debootstrap (or with -short) a test is skipped with the reason,
// or fails when the CI environment variable is set, so CI cannot pass
// without exercising the real image.
package debiantest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Packages are debootstrap's --include list; changing it changes Name, so
// a cached tree built with another list is never mistaken for this one.
var Packages = []string{"python3", "python3-pip", "git", "gcc", "libc6-dev", "ca-certificates"}

// Name is the cache entry's name.
const Name = "debian-bookworm-dev"

// Cache is the directory holding the tree and image between runs
// (WARREN_TEST_CACHE overrides /var/cache/warren-test).
func Cache() string {
	if d := os.Getenv("WARREN_TEST_CACHE"); d != "" {
		return d
	}
	return "/var/cache/warren-test"
}

// mu orders builds within a test binary; the flock in Image orders them
// across the binaries `go test ./...` runs in parallel (native and sandbox
// both need the tree, and two debootstraps into one .tmp wreck each other).
var mu sync.Mutex

// Image returns the root tree and the EROFS image built from it, building
// and caching both on first use.
func Image(tb testing.TB) (root, img string) {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	cache := Cache()
	if err := os.MkdirAll(cache, 0o755); err != nil {
		tb.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(cache, Name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	defer lock.Close() // closing drops the flock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		tb.Fatalf("lock %s: %v", lock.Name(), err)
	}
	root = filepath.Join(cache, Name)
	img = root + ".erofs"
	stamp := filepath.Join(root, ".warren-packages")
	want := strings.Join(Packages, ",")
	if got, err := os.ReadFile(stamp); err != nil || string(got) != want {
		deb, err := exec.LookPath("debootstrap")
		if err != nil {
			skipOrFail(tb, "debootstrap not installed (apt-get install debootstrap) and no cached Debian tree in "+cache)
		}
		if testing.Short() {
			skipOrFail(tb, "-short: not building the Debian image (~1 min, ~250 MB download)")
		}
		tmp := root + ".tmp"
		os.RemoveAll(tmp)
		cmd := exec.Command(deb, "--variant=minbase", "--include="+want, "bookworm", tmp, "http://deb.debian.org/debian")
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("debootstrap: %v\n%s", err, LastLines(string(out), 20))
		}
		if err := os.WriteFile(filepath.Join(tmp, ".warren-packages"), []byte(want), 0o644); err != nil {
			tb.Fatal(err)
		}
		os.RemoveAll(root)
		if err := os.Rename(tmp, root); err != nil {
			tb.Fatal(err)
		}
		os.Remove(img)
	}
	if _, err := os.Stat(img); err != nil {
		tmp := img + ".tmp"
		if out, err := exec.Command("mkfs.erofs", "--quiet", "--preserve-mtime", tmp, root).CombinedOutput(); err != nil {
			tb.Fatalf("mkfs.erofs: %v %s", err, out)
		}
		if err := os.Rename(tmp, img); err != nil {
			tb.Fatal(err)
		}
	}
	return root, img
}

func skipOrFail(tb testing.TB, why string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatal(why)
	}
	tb.Skip(why)
}

// LastLines returns the last n lines of s (for quoting a tool's output).
func LastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
