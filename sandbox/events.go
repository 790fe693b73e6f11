package sandbox

import (
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// event logs one lifecycle event of a sandbox as a structured line
// ("sandbox event", event=create|standby|resume|ttl_delete|native_oom), so
// an operator can follow a sandbox through the node's log.
func (m *Manager) event(kind string, b *box, kv ...any) {
	args := append([]any{"event", kind, "sandbox", b.id, "tenant", b.tenant}, kv...)
	m.log.Info("sandbox event", args...)
}

// resumeEvent logs a resume when b left standby.
func (m *Manager) resumeEvent(b *box, before string) {
	if before == api.StateStandby {
		m.event("resume", b)
	}
}

// nativeCounters count the native tier since start.
type nativeCounters struct {
	oomKills atomic.Uint64
	cpu      atomic.Int64 // ns of the native processes' cgroups
}

// NativeStats are the native tier's figures for /metrics.
type NativeStats struct {
	Workspaces int     // live workspaces (one per sandbox that ran an ELF since it resumed)
	OOMKills   uint64  // native processes killed over a sandbox's memory limit
	CPUSeconds float64 // CPU time of native processes (their cgroups)
}

// AddNodeStats adds o's native and per-tenant figures to s (a pool sums its
// workers' Stats).
func (s *Stats) AddNodeStats(o Stats) {
	s.Native.Workspaces += o.Native.Workspaces
	s.Native.OOMKills += o.Native.OOMKills
	s.Native.CPUSeconds += o.Native.CPUSeconds
	s.Chunks.Add(o.Chunks)
	if len(o.Tenants) > 0 && s.Tenants == nil {
		s.Tenants = map[string]int{}
	}
	for t, n := range o.Tenants {
		s.Tenants[t] += n
	}
}

func (m *Manager) nativeStats(boxes []*box) (NativeStats, map[string]int) {
	ns := NativeStats{OOMKills: m.native.oomKills.Load(), CPUSeconds: time.Duration(m.native.cpu.Load()).Seconds()}
	tenants := map[string]int{}
	for _, b := range boxes {
		b.mu.Lock()
		if b.ws != nil {
			ns.Workspaces++
		}
		if b.state != api.StateDeleted {
			tenants[b.tenant]++
		}
		b.mu.Unlock()
	}
	return ns, tenants
}

// checkLabels validates the labels of a create or a fork.
func checkLabels(labels map[string]string) error {
	if len(labels) > 64 {
		return api.Errorf(api.ErrUnprocessable, "too many labels (%d, max 64)", len(labels))
	}
	for k, v := range labels {
		if !labelKeyRE.MatchString(k) {
			return api.Errorf(api.ErrUnprocessable, "bad label key %q: want 1-63 of [A-Za-z0-9._/-]", k)
		}
		if len(v) > 256 {
			return api.Errorf(api.ErrUnprocessable, "label %q: value longer than 256 bytes", k)
		}
	}
	return nil
}

// withLabels returns a copy of base with over set on it (base, a parent's
// map, is not changed).
func withLabels(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
