package native_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/native"
)

func TestMain(m *testing.M) {
	native.MaybeInit() // the workspace init is this test binary re-executed
	code := m.Run()
	cleanupShared()
	os.Exit(code)
}

var (
	sharedOnce sync.Once
	sharedRT   *native.Runtime
	sharedImg  string
	sharedDir  string
	sharedErr  error
	sharedLog  bytes.Buffer // the shared runtime's log (written only while it starts)
)

// requireRuntime returns the package's shared runtime over a busybox image,
// or skips the test with the reason native cannot run here.
func requireRuntime(t testing.TB) (*native.Runtime, string) {
	t.Helper()
	sharedOnce.Do(func() {
		if os.Geteuid() != 0 {
			sharedErr = fmt.Errorf("native tests need root (mounts, cgroups, namespaces)")
			return
		}
		for _, tool := range []string{"mkfs.erofs", "busybox"} {
			if _, err := exec.LookPath(tool); err != nil {
				sharedErr = fmt.Errorf("%s not installed (apt-get install erofs-utils busybox-static)", tool)
				return
			}
		}
		sharedDir, sharedErr = os.MkdirTemp("", "warren-native-test-")
		if sharedErr != nil {
			return
		}
		os.Chmod(sharedDir, 0o711)
		sharedImg, sharedErr = BuildBusyboxImage(filepath.Join(sharedDir, "img"))
		if sharedErr != nil {
			return
		}
		sharedRT, sharedErr = native.NewRuntime(context.Background(), native.Config{
			RunDir:     filepath.Join(sharedDir, "run"),
			CgroupName: "warren-native-test",
			Logger:     slog.New(slog.NewTextHandler(&sharedLog, nil)),
		})
		if sharedErr == nil {
			sharedErr = sharedRT.Available()
		}
	})
	if sharedErr != nil {
		t.Skipf("native tier unavailable: %v", sharedErr)
	}
	return sharedRT, sharedImg
}

func cleanupShared() {
	if sharedRT != nil {
		sharedRT.Close()
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
}

// BuildBusyboxImage writes dir/root (busybox-static plus its applet links
// and the usual top-level directories) and packs it into dir/busybox.erofs.
func BuildBusyboxImage(dir string) (string, error) { return buildBusyboxImageWith(dir, nil) }

// buildBusyboxImageWith is BuildBusyboxImage with extra files: image path
// -> host file copied there (mode 0755).
func buildBusyboxImageWith(dir string, extra map[string]string) (string, error) {
	root := filepath.Join(dir, "root")
	for _, d := range []string{"bin", "sbin", "usr/bin", "usr/sbin", "etc", "proc", "dev", "tmp", "root", "home/user", "sys", "var"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return "", err
		}
	}
	os.Chmod(filepath.Join(root, "tmp"), 0o1777)
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, "bin/busybox"), data, 0o755); err != nil {
		return "", err
	}
	out, err := exec.Command(bb, "--list-full").Output()
	if err != nil {
		return "", fmt.Errorf("busybox --list-full: %w", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "bin/busybox" {
			continue
		}
		dst := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		rel, _ := filepath.Rel(filepath.Dir(dst), filepath.Join(root, "bin/busybox"))
		if err := os.Symlink(rel, dst); err != nil && !os.IsExist(err) {
			return "", err
		}
	}
	files := map[string]string{
		"etc/passwd":   "root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\n",
		"etc/group":    "root:x:0:\nuser:x:1000:\n",
		"etc/hostname": "base\n",
		"etc/motd":     "from the base image\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	for dst, src := range extra {
		b, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(root, dst), b, 0o755); err != nil {
			return "", err
		}
	}
	os.Chown(filepath.Join(root, "home/user"), 1000, 1000)
	img := filepath.Join(dir, "busybox.erofs")
	if out, err := exec.Command("mkfs.erofs", "--quiet", "--preserve-mtime", img, root).CombinedOutput(); err != nil {
		return "", fmt.Errorf("mkfs.erofs: %v: %s", err, out)
	}
	return img, nil
}
