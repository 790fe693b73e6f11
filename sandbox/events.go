package sandbox

import "github.com/warren-sandbox/warren/api"

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
