package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
)

// TestSecurityLevel: a sandbox's native confinement is set at create,
// shown in its JSON and reaches the native tier: the default level masks
// /proc/sys/kernel/core_pattern and refuses unshare; relaxed does neither.
func TestSecurityLevel(t *testing.T) {
	rt := requireNative(t)
	e := newNativeEnv(t, rt)
	ctx := context.Background()
	if _, err := e.svc.Create(ctx, api.CreateRequest{Image: "busybox", Security: "loose"}); !errors.Is(err, api.ErrUnprocessable) || !strings.Contains(err.Error(), `security "loose"`) {
		t.Fatalf("bad level: %v", err)
	}
	probe := `/bin/busybox cat /proc/sys/kernel/core_pattern | /bin/busybox wc -c; /bin/busybox unshare -m /bin/busybox true && echo unshared || echo refused`
	tests := []struct {
		level, want, shown string
	}{
		{"", "0\nrefused\n", api.SecurityDefault},
		{api.SecurityDefault, "0\nrefused\n", api.SecurityDefault},
		{api.SecurityRelaxed, "unshared\n", api.SecurityRelaxed},
	}
	for _, tt := range tests {
		t.Run("level "+tt.shown+" from "+tt.level, func(t *testing.T) {
			sb, err := e.svc.Create(ctx, api.CreateRequest{Image: "busybox", Security: tt.level})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := e.svc.Get(ctx, sb.ID); got.Security != tt.shown {
				t.Fatalf("sandbox shows security %q, want %q", got.Security, tt.shown)
			}
			out, errs, _ := run(t, e.svc, sb.ID, probe)
			if tt.level == api.SecurityRelaxed {
				// core_pattern is readable (non-empty) and unshare works.
				if strings.HasPrefix(out, "0\n") || !strings.HasSuffix(out, tt.want) {
					t.Fatalf("relaxed probe: %q (stderr %q)", out, errs)
				}
				return
			}
			if out != tt.want {
				t.Fatalf("probe: %q, want %q (stderr %q)", out, tt.want, errs)
			}
		})
	}
}
