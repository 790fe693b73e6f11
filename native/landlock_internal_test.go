package native

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestLandlockPlan(t *testing.T) {
	devs := []string{"null", "tty"}
	const (
		w  = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
		tr = unix.LANDLOCK_ACCESS_FS_TRUNCATE
		io = unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
		mk = unix.LANDLOCK_ACCESS_FS_MAKE_REG
		md = unix.LANDLOCK_ACCESS_FS_MAKE_DIR
		rf = unix.LANDLOCK_ACCESS_FS_REFER
		cd = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR
	)
	tests := []struct {
		abi         int
		handled     uint64 // bits that must be handled
		unhandled   uint64 // bits that must not be
		grants      map[string]uint64
		notGranted  map[string]uint64
		absentRules []string
	}{
		{
			abi: 2, handled: w | mk | rf | cd, unhandled: tr | io,
			grants:      map[string]uint64{"/": w | mk | md | rf, "/dev/shm": w | mk, "/dev/null": w},
			notGranted:  map[string]uint64{"/": cd, "/dev/null": tr | io},
			absentRules: []string{"/proc", "/dev", "/sys", "/usr"},
		},
		{
			abi: 5, handled: w | tr | io | rf, unhandled: unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX,
			grants:      map[string]uint64{"/": w | tr, "/dev/null": w | tr | io, "/dev/tty": io, "/dev/pts": w | io},
			notGranted:  map[string]uint64{"/": io | cd, "/dev/shm": io},
			absentRules: []string{"/proc", "/dev", "/sys", "/usr"},
		},
		{
			abi: 7, handled: w | tr | io | rf, unhandled: unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX,
			grants: map[string]uint64{"/": w | tr},
		},
	}
	for _, tc := range tests {
		handled, rules := llPlan(tc.abi, devs)
		if handled&tc.handled != tc.handled || handled&tc.unhandled != 0 {
			t.Errorf("abi %d: handled %#x, want %#x set and %#x clear", tc.abi, handled, tc.handled, tc.unhandled)
		}
		byPath := map[string]uint64{}
		for _, r := range rules {
			if r.access&^handled != 0 {
				t.Errorf("abi %d: rule %s grants unhandled rights %#x", tc.abi, r.path, r.access&^handled)
			}
			if _, dup := byPath[r.path]; dup {
				t.Errorf("abi %d: two rules for %s", tc.abi, r.path)
			}
			byPath[r.path] = r.access
		}
		for p, bits := range tc.grants {
			if a, ok := byPath[p]; !ok || a&bits != bits {
				t.Errorf("abi %d: %s granted %#x, want at least %#x", tc.abi, p, a, bits)
			}
		}
		for p, bits := range tc.notGranted {
			if a := byPath[p]; a&bits != 0 {
				t.Errorf("abi %d: %s granted %#x, must not have %#x", tc.abi, p, a, a&bits)
			}
		}
		for _, p := range tc.absentRules {
			if _, ok := byPath[p]; ok {
				t.Errorf("abi %d: a rule for %s (it must be covered by / alone)", tc.abi, p)
			}
		}
	}
}

// TestLandlockABI: the kernel reports a version or a reason, never both.
func TestLandlockABI(t *testing.T) {
	abi, err := landlockABI()
	if (abi == 0) == (err == nil) {
		t.Fatalf("landlockABI() = %d, %v: want a version or a reason", abi, err)
	}
	if err != nil {
		t.Skip("no usable Landlock on this kernel: ", err)
	}
	if abi < llMinABI {
		t.Fatalf("ABI %d below the minimum %d was accepted", abi, llMinABI)
	}
	t.Logf("Landlock ABI %d", abi)
}
