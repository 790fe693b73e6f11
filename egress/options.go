package egress

import (
	"crypto/x509"
	"fmt"
	"net/netip"
	"os"
)

// Options are the operator's egress settings as flags give them (warren
// serve --egress-*); Build turns them into an Egress. Args is the same
// settings as flags again, for worker processes.
type Options struct {
	AllowCIDRs []string // --egress-allow-cidr: always-denied ranges opened anyway
	HostsFile  string   // --egress-hosts: hosts(5) file read before DNS
	HostsOnly  bool     // --egress-hosts-only: no DNS at all
	Allow      []string // --egress-allow: the server's ceiling (none: anything public)
	Deny       []string // --egress-deny: denied for every sandbox
	CAFile     string   // --egress-ca: PEM roots added to the host's
	Insecure   bool     // --egress-allow-insecure: curl -k allowed
}

// Build makes the node's Egress, naming the flag of any bad setting.
func (o Options) Build() (*Egress, error) {
	cfg := Config{AllowInsecure: o.Insecure, HostsOnly: o.HostsOnly}
	for _, s := range o.AllowCIDRs {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("--egress-allow-cidr %q: want a CIDR such as 10.0.0.0/8", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		cfg.AllowCIDRs = append(cfg.AllowCIDRs, p.Masked())
	}
	if o.HostsFile != "" {
		f, err := os.Open(o.HostsFile)
		if err != nil {
			return nil, fmt.Errorf("--egress-hosts: %w", err)
		}
		defer f.Close()
		if cfg.Hosts, err = ParseHosts(f); err != nil {
			return nil, fmt.Errorf("--egress-hosts %s: %w", o.HostsFile, err)
		}
	}
	p, err := ParsePolicy(o.Allow, o.Deny)
	if err != nil {
		return nil, fmt.Errorf("--egress-allow/--egress-deny: %w", err)
	}
	if len(p.Allow) == 0 {
		p.Allow = AllowAll.Allow
	}
	cfg.Ceiling = p
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--egress-ca: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--egress-ca %s: no PEM certificates in it", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	return New(cfg), nil
}

// Args renders o as serve's flags.
func (o Options) Args() []string {
	var a []string
	for _, s := range o.AllowCIDRs {
		a = append(a, "--egress-allow-cidr="+s)
	}
	if o.HostsFile != "" {
		a = append(a, "--egress-hosts="+o.HostsFile)
	}
	if o.HostsOnly {
		a = append(a, "--egress-hosts-only")
	}
	for _, s := range o.Allow {
		a = append(a, "--egress-allow="+s)
	}
	for _, s := range o.Deny {
		a = append(a, "--egress-deny="+s)
	}
	if o.CAFile != "" {
		a = append(a, "--egress-ca="+o.CAFile)
	}
	if o.Insecure {
		a = append(a, "--egress-allow-insecure")
	}
	return a
}

// Usage is each flag's help text, shared by serve and its workers.
var Usage = map[string]string{
	"egress-allow-cidr":     "CIDR: let sandboxes reach this otherwise always-denied range (loopback, private, link-local, metadata) when their own policy allows it (repeatable)",
	"egress-hosts":          "FILE: hosts(5) file mapping names to addresses before any DNS lookup (tests, air-gapped sites)",
	"egress-hosts-only":     "resolve names through --egress-hosts alone, never DNS (air-gapped sites)",
	"egress-allow":          "RULE: the server's egress ceiling; sandboxes cannot widen it (repeatable; default: anything public)",
	"egress-deny":           "RULE: denied to every sandbox (repeatable)",
	"egress-ca":             "FILE: PEM certificates trusted for sandboxes' HTTPS, besides the host's roots",
	"egress-allow-insecure": "let curl -k / wget --no-check-certificate skip certificate checks (refused otherwise)",
}
