package egress

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is a node's egress: what the operator decides for every sandbox.
type Config struct {
	// Ceiling is the server's policy: a sandbox's own policy can only
	// narrow it (a request must pass both). Zero means AllowAll.
	Ceiling Policy
	// AllowCIDRs are the always-denied ranges (loopback, private,
	// link-local, metadata...) the operator opens anyway (warren serve
	// --egress-allow-cidr). Sandboxes still need their own allow rule.
	AllowCIDRs []netip.Prefix
	// Hosts maps names to addresses before any DNS lookup (warren serve
	// --egress-hosts, hosts(5) format; see ParseHosts).
	Hosts map[string][]netip.Addr
	// HostsOnly resolves names through Hosts alone, never DNS (air-gapped
	// sites, tests).
	HostsOnly bool
	// RootCAs verifies servers (nil: the host's roots).
	RootCAs *x509.CertPool
	// AllowInsecure lets curl -k / wget --no-check-certificate skip
	// verification; off, they are refused.
	AllowInsecure bool
	// AuditSize bounds each sandbox's audit list (default 256).
	AuditSize int
	// DialTimeout bounds one connection attempt (default 10s).
	DialTimeout time.Duration
}

// Egress is a node's egress: a Config and the counters behind /metrics.
type Egress struct {
	cfg     Config
	allowed atomic.Uint64
	denied  atomic.Uint64

	// resolve and dial are the system's; tests replace them to count
	// what reaches the network.
	resolve func(ctx context.Context, name string) ([]netip.Addr, error)
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

// New returns a node's egress.
func New(cfg Config) *Egress {
	if len(cfg.Ceiling.Allow) == 0 && len(cfg.Ceiling.Deny) == 0 {
		cfg.Ceiling = AllowAll
	}
	if cfg.AuditSize <= 0 {
		cfg.AuditSize = 256
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	d := &net.Dialer{Timeout: cfg.DialTimeout}
	return &Egress{
		cfg:  cfg,
		dial: d.DialContext,
		resolve: func(ctx context.Context, name string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", name)
		},
	}
}

// Counts returns the decisions made so far on the node (for /metrics).
func (e *Egress) Counts() (allowed, denied uint64) { return e.allowed.Load(), e.denied.Load() }

// AllowsInsecure reports whether curl -k is allowed on this node.
func (e *Egress) AllowsInsecure() bool { return e.cfg.AllowInsecure }

// Sandbox is one sandbox's egress: its policy (changeable at run time), its
// secrets and its audit list. Safe for concurrent use.
type Sandbox struct {
	e       *Egress
	id      string
	policy  atomic.Pointer[Policy]
	secrets atomic.Pointer[[]Secret]

	amu   sync.Mutex
	audit []Decision // ring of cfg.AuditSize
	next  int
	total uint64

	tmu sync.Mutex
	tr  *transport // lazily built (transport.go)

	icpt interceptCA // the native tier's interception CA (intercept.go)
}

// Sandbox returns the egress of sandbox id under policy p.
func (e *Egress) Sandbox(id string, p Policy) *Sandbox {
	s := &Sandbox{e: e, id: id}
	s.policy.Store(&p)
	return s
}

// SetPolicy replaces the sandbox's policy; the next request is checked
// against it (idle connections made under the old one are closed).
func (s *Sandbox) SetPolicy(p Policy) {
	s.policy.Store(&p)
	s.tmu.Lock()
	tr := s.tr
	s.tmu.Unlock()
	if tr != nil {
		tr.CloseIdleConnections()
	}
}

// Close drops the sandbox's secrets and kept-alive connections (the
// sandbox is deleted); its policy denies everything from then on.
func (s *Sandbox) Close() {
	s.SetSecrets(nil)
	s.SetPolicy(Policy{})
}

// Policy returns the sandbox's current policy.
func (s *Sandbox) Policy() Policy { return *s.policy.Load() }

// Decision is one entry of the audit list.
type Decision struct {
	Time    time.Time `json:"time"`
	Sandbox string    `json:"sandbox"`
	Host    string    `json:"host"` // as asked for
	Port    int       `json:"port"`
	Addr    string    `json:"addr,omitempty"` // the address dialed, when allowed
	Allowed bool      `json:"allowed"`
	Reason  string    `json:"reason"`
}

func (s *Sandbox) record(d Decision) {
	if d.Allowed {
		s.e.allowed.Add(1)
	} else {
		s.e.denied.Add(1)
	}
	d.Time, d.Sandbox = time.Now().UTC(), s.id
	s.amu.Lock()
	defer s.amu.Unlock()
	if len(s.audit) < s.e.cfg.AuditSize {
		s.audit = append(s.audit, d)
	} else {
		s.audit[s.next] = d
	}
	s.next = (s.next + 1) % s.e.cfg.AuditSize
	s.total++
}

// Audit returns the sandbox's last decisions, oldest first, and how many
// were made in all (the list keeps only the last AuditSize).
func (s *Sandbox) Audit() ([]Decision, uint64) {
	s.amu.Lock()
	defer s.amu.Unlock()
	out := make([]Decision, 0, len(s.audit))
	if len(s.audit) == s.e.cfg.AuditSize {
		out = append(out, s.audit[s.next:]...)
		out = append(out, s.audit[:s.next]...)
	} else {
		out = append(out, s.audit...)
	}
	return out, s.total
}

// DeniedError is a connection the policy refused. Its text names the
// policy (the sandbox's, the server's, or the always-denied ranges) and
// the rule that decided.
type DeniedError struct {
	Sandbox string
	Host    string
	Port    int
	Reason  string
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("blocked by the egress policy of sandbox %s: %s", e.Sandbox, e.Reason)
}

// ResolveError is a name that has no address.
type ResolveError struct {
	Host string
	Err  error
}

func (e *ResolveError) Error() string {
	return fmt.Sprintf("could not resolve host %s: %v", e.Host, e.Err)
}
func (e *ResolveError) Unwrap() error { return e.Err }

// nameVerdict decides a name before it is resolved: names are allowed only
// by name rules (never by CIDR rules), so a denied name is never even
// looked up (no DNS exfiltration).
func (s *Sandbox) nameVerdict(name string, port int) string {
	p := s.policy.Load()
	for _, r := range p.Deny {
		if r.matchName(name, port) {
			return fmt.Sprintf("%s:%d matches the sandbox's deny rule %q", name, port, r.text)
		}
	}
	for _, r := range s.e.cfg.Ceiling.Deny {
		if r.matchName(name, port) {
			return fmt.Sprintf("%s:%d matches the server's deny rule %q", name, port, r.text)
		}
	}
	if !anyName(p.Allow, name, port) {
		return fmt.Sprintf("%s:%d is not in the sandbox's allow list", name, port)
	}
	if !anyName(s.e.cfg.Ceiling.Allow, name, port) {
		return fmt.Sprintf("%s:%d is not in the server's allow list (a sandbox cannot widen it)", name, port)
	}
	return ""
}

func anyName(rs []Rule, name string, port int) bool {
	for _, r := range rs {
		if r.matchName(name, port) {
			return true
		}
	}
	return false
}

func anyAddr(rs []Rule, a netip.Addr, port int) bool {
	for _, r := range rs {
		if r.matchAddr(a, port) {
			return true
		}
	}
	return false
}

// addrVerdict decides one address: literal says it was asked for as an
// address (so an allow rule must name it), else it is what an allowed name
// resolved to (so only deny rules and the always-denied ranges apply).
func (s *Sandbox) addrVerdict(a netip.Addr, port int, literal bool) string {
	a = a.Unmap()
	p := s.policy.Load()
	for _, r := range p.Deny {
		if r.matchAddr(a, port) {
			return fmt.Sprintf("%s matches the sandbox's deny rule %q", a, r.text)
		}
	}
	for _, r := range s.e.cfg.Ceiling.Deny {
		if r.matchAddr(a, port) {
			return fmt.Sprintf("%s matches the server's deny rule %q", a, r.text)
		}
	}
	if pfx, ok := special(a); ok && !s.operatorAllows(a) {
		return fmt.Sprintf("%s is in %s, always denied unless the operator allows it (warren serve --egress-allow-cidr)", a, pfx)
	}
	if literal {
		if !anyAddr(p.Allow, a, port) {
			return fmt.Sprintf("%s:%d is not in the sandbox's allow list", a, port)
		}
		if !anyAddr(s.e.cfg.Ceiling.Allow, a, port) {
			return fmt.Sprintf("%s:%d is not in the server's allow list (a sandbox cannot widen it)", a, port)
		}
	}
	return ""
}

func (s *Sandbox) operatorAllows(a netip.Addr) bool {
	for _, p := range s.e.cfg.AllowCIDRs {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Check decides host:port without dialing: the addresses it may dial, in
// order, or a *DeniedError / *ResolveError. Every call is one audit entry.
func (s *Sandbox) Check(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	addrs, err := s.check(ctx, host, port)
	d := Decision{Host: host, Port: port, Allowed: err == nil}
	var de *DeniedError
	switch {
	case err == nil:
		d.Reason, d.Addr = "allowed", addrs[0].String()
	case errors.As(err, &de):
		d.Reason = de.Reason
	default:
		d.Reason = err.Error()
	}
	s.record(d)
	return addrs, err
}

func (s *Sandbox) check(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	deny := func(why string) error { return &DeniedError{Sandbox: s.id, Host: host, Port: port, Reason: why} }
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return nil, deny(fmt.Sprintf("%s: zoned addresses are not dialed", host))
		}
		if why := s.addrVerdict(a, port, true); why != "" {
			return nil, deny(why)
		}
		return []netip.Addr{a.Unmap()}, nil
	}
	name, err := checkName(h)
	if err != nil {
		return nil, deny(err.Error())
	}
	if why := s.nameVerdict(name, port); why != "" {
		return nil, deny(why)
	}
	addrs, err := s.lookup(ctx, name)
	if err != nil {
		return nil, &ResolveError{Host: host, Err: err}
	}
	// Every address is checked; only the ones that pass are dialed, so a
	// name that (re)binds to a private address never reaches it.
	var ok []netip.Addr
	var first string
	for _, a := range addrs {
		if why := s.addrVerdict(a, port, false); why != "" {
			if first == "" {
				first = fmt.Sprintf("%s resolves to %s", name, why)
			}
			continue
		}
		ok = append(ok, a.Unmap())
	}
	if len(ok) == 0 {
		return nil, deny(first)
	}
	return ok, nil
}

func (s *Sandbox) lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	if as, ok := s.e.cfg.Hosts[name]; ok {
		return as, nil
	}
	if s.e.cfg.HostsOnly {
		return nil, errors.New("not in the egress hosts file")
	}
	as, err := s.e.resolve(ctx, name)
	if err == nil && len(as) == 0 {
		err = errors.New("no addresses")
	}
	return as, err
}

// checkedKey carries a request's decision to the dial it causes.
type checkedKey struct{}

type checked struct {
	hostport string
	addrs    []netip.Addr
}

// DialContext dials addr ("host:port") after checking it, and dials the
// checked address itself, never the name (no DNS rebinding between check
// and dial).
func (s *Sandbox) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", addr)
	}
	var addrs []netip.Addr
	if c, ok := ctx.Value(checkedKey{}).(*checked); ok && c.hostport == addr {
		addrs = c.addrs
	} else if addrs, err = s.Check(ctx, host, port); err != nil {
		return nil, err
	}
	var last error
	for _, a := range addrs {
		conn, err := s.e.dial(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		last = err
	}
	return nil, last
}
