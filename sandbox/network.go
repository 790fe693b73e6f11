package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/egress"
)

// The network of a sandbox (README "Network").
//
// Each box has an egress.Sandbox when the node has an egress layer
// (Config.Egress): its policy comes from the create request's "network"
// (none: default deny, everything refused naming the policy), is replaced
// by PUT .../network and is recorded with the sandbox, so it survives
// hibernation and restarts. Secrets are not: their values live only in
// the egress.Sandbox, in memory -- never in the record, the vfs, a
// StateRef, a snapshot, the write log or a log line -- so a node restart
// (or a resume on another node) loses them and the platform sets them
// again with PUT .../network. Placeholders (in the env) stay valid only
// while the values are held.

// netClient is every session's commands.HTTPClient: it finds the sandbox
// of the exec through ctx (as the native hook does), so a forked session
// never talks through its parent's policy.
type netClient struct{}

func (netClient) Do(ctx context.Context, req *commands.HTTPRequest) (*commands.HTTPResponse, error) {
	ri, _ := ctx.Value(runInfoKey{}).(*runInfo)
	if ri == nil || ri.b.net == nil {
		return nil, &commands.NetError{Code: commands.NetConnect, Msg: "network disabled for this sandbox"}
	}
	return ri.b.net.Client().Do(ctx, req)
}

// sessionNet is what sessions get as their network (nil without egress).
func (m *Manager) sessionNet() commands.HTTPClient {
	if m.cfg.Egress == nil {
		return nil
	}
	return netClient{}
}

// newNet makes b's egress from its record.
func (m *Manager) newNet(b *box) {
	if m.cfg.Egress == nil {
		return
	}
	var p egress.Policy
	if n := b.cfg.Network; n != nil {
		// Checked at create and update; a record that no longer parses
		// (hand-edited meta) gets nothing rather than something.
		p, _ = egress.ParsePolicy(n.Allow, n.Deny)
	}
	b.net = m.cfg.Egress.Sandbox(b.id, p)
}

// checkNetwork validates the network part of a create request.
func (m *Manager) checkNetwork(req api.CreateRequest) error {
	if req.Network == nil && len(req.Secrets) == 0 {
		return nil
	}
	if m.cfg.Egress == nil {
		return api.Errorf(errdefs.ErrFailedPrecondition, "network: this node has no egress layer")
	}
	if req.Network != nil {
		if _, err := egress.ParsePolicy(req.Network.Allow, req.Network.Deny); err != nil {
			return api.Errorf(api.ErrUnprocessable, "network: %v", err)
		}
	}
	_, err := makeSecrets(req.Secrets, nil)
	return err
}

// makeSecrets builds secrets from their specs; a name already holding a
// placeholder in env keeps it (sessions keep working across an update).
func makeSecrets(specs []api.SecretSpec, env map[string]string) ([]egress.Secret, error) {
	if len(specs) > 64 {
		return nil, api.Errorf(api.ErrUnprocessable, "too many secrets (%d, max 64)", len(specs))
	}
	seen := map[string]bool{}
	var out []egress.Secret
	for _, sp := range specs {
		if seen[sp.Name] {
			return nil, api.Errorf(api.ErrUnprocessable, "secret %s given twice", sp.Name)
		}
		seen[sp.Name] = true
		s, err := egress.NewSecret(sp.Name, sp.Value, sp.Hosts, sp.Body)
		if err != nil {
			return nil, api.Errorf(api.ErrUnprocessable, "%v", err)
		}
		if old := env[sp.Name]; strings.HasPrefix(old, "warren-secret-"+sp.Name+"-") {
			s.Placeholder = old
		}
		out = append(out, s)
	}
	return out, nil
}

// takeSecrets moves the secrets out of a create request (so they never
// reach the record) and puts their placeholders in its env. A placeholder
// already there (a sandbox from a snapshot, whose restored shell state
// still holds it) is kept.
func takeSecrets(req api.CreateRequest) (api.CreateRequest, []egress.Secret, error) {
	secrets, err := makeSecrets(req.Secrets, req.Env)
	req.Secrets = nil
	if err != nil || len(secrets) == 0 {
		return req, nil, err
	}
	env := make(map[string]string, len(req.Env)+len(secrets))
	for k, v := range req.Env {
		env[k] = v
	}
	for _, s := range secrets {
		env[s.Name] = s.Placeholder
	}
	req.Env = env
	return req, secrets, nil
}

// networkPolicy is b's policy as the API shows it (nil: no egress).
func (b *box) networkPolicy() *api.NetworkPolicy {
	if b.net == nil {
		return b.cfg.Network
	}
	allow, deny := b.net.Policy().Strings()
	if allow == nil && deny == nil && b.cfg.Network == nil {
		return nil
	}
	return &api.NetworkPolicy{Allow: allow, Deny: deny}
}

func (b *box) networkStatus() api.NetworkStatus {
	st := api.NetworkStatus{Audit: []api.NetworkDecision{}}
	if p := b.networkPolicy(); p != nil {
		st.Policy = *p
	}
	if b.net == nil {
		return st
	}
	for _, s := range b.net.Secrets() {
		info := api.SecretInfo{Name: s.Name, Placeholder: s.Placeholder}
		for _, h := range s.Hosts {
			info.Hosts = append(info.Hosts, h.String())
		}
		st.Secrets = append(st.Secrets, info)
	}
	sort.Slice(st.Secrets, func(i, j int) bool { return st.Secrets[i].Name < st.Secrets[j].Name })
	audit, total := b.net.Audit()
	for _, d := range audit {
		st.Audit = append(st.Audit, api.NetworkDecision{Time: d.Time, Host: d.Host, Port: d.Port, Addr: d.Addr, Allowed: d.Allowed, Reason: d.Reason})
	}
	st.Decisions = total
	return st
}

var _ api.NetworkManager = (*tenantView)(nil)

func (t *tenantView) GetNetwork(ctx context.Context, id string) (api.NetworkStatus, error) {
	b, err := t.box(id)
	if err != nil {
		return api.NetworkStatus{}, err
	}
	return b.networkStatus(), nil
}

// SetNetwork replaces b's policy (recorded, applied to the next request)
// and, when up.Secrets is non-nil, its secrets (memory only).
func (t *tenantView) SetNetwork(ctx context.Context, id string, up api.NetworkUpdate) (api.NetworkStatus, error) {
	b, err := t.box(id)
	if err != nil {
		return api.NetworkStatus{}, err
	}
	if b.net == nil {
		return api.NetworkStatus{}, api.Errorf(errdefs.ErrFailedPrecondition, "network: this node has no egress layer")
	}
	p, err := egress.ParsePolicy(up.Allow, up.Deny)
	if err != nil {
		return api.NetworkStatus{}, api.Errorf(api.ErrUnprocessable, "network: %v", err)
	}
	var secrets []egress.Secret
	if up.Secrets != nil {
		if secrets, err = makeSecrets(up.Secrets, b.cfg.Env); err != nil {
			return api.NetworkStatus{}, err
		}
	}
	b.mu.Lock()
	if b.state == api.StateDeleted {
		b.mu.Unlock()
		return api.NetworkStatus{}, notFound(b.id)
	}
	b.net.SetPolicy(p)
	if up.Secrets != nil {
		b.net.SetSecrets(secrets)
	}
	err = t.m.cfg.Meta.PutSandbox(ctx, b.recordLocked())
	b.mu.Unlock()
	if err != nil {
		return api.NetworkStatus{}, fmt.Errorf("cannot record the network policy: %w", err)
	}
	return b.networkStatus(), nil
}
