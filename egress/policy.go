// Package egress is a sandbox's way out to the network: a default-deny
// policy of allowed and denied hosts, a dialer that checks every address it
// dials, an HTTP transport that checks every request (and so every
// redirect), secret placeholders swapped for their values only on the way to
// their own hosts over TLS, a bounded audit list of decisions, and the
// forward proxy the native tier reaches the network through.
//
// It lives outside the resident boundary (vfs, shell and commands never
// import net): resident commands see it only through commands.HTTPClient.
package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one entry of an allow or deny list:
//
//	example.com        that name exactly (any port)
//	*.example.com      any name under example.com (not example.com itself)
//	*                  any name or address
//	10.0.0.0/8         addresses in that prefix (names resolving there too)
//	192.0.2.7          that address
//	HOST:443           any of the above, on that port only ("[::1]:443" for v6)
type Rule struct {
	text   string
	name   string // exact name, lower case
	suffix string // "*.x": ".x"
	any    bool   // "*"
	prefix netip.Prefix
	port   int // 0: any
}

func (r Rule) String() string { return r.text }

// ParseRule parses one list entry.
func ParseRule(s string) (Rule, error) {
	r := Rule{text: s}
	host := strings.TrimSpace(s)
	if host == "" {
		return r, fmt.Errorf("egress rule %q: empty", s)
	}
	// A trailing :PORT, except inside a bare v6 address or prefix.
	if strings.HasPrefix(host, "[") {
		end := strings.Index(host, "]")
		if end < 0 {
			return r, fmt.Errorf("egress rule %q: missing ]", s)
		}
		rest := host[end+1:]
		host = host[1:end]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return r, fmt.Errorf("egress rule %q: want [ADDR]:PORT", s)
			}
			p, err := parsePort(rest[1:])
			if err != nil {
				return r, fmt.Errorf("egress rule %q: %w", s, err)
			}
			r.port = p
		}
	} else if i := strings.LastIndex(host, ":"); i >= 0 && strings.Count(host, ":") == 1 {
		p, err := parsePort(host[i+1:])
		if err != nil {
			return r, fmt.Errorf("egress rule %q: %w", s, err)
		}
		r.port, host = p, host[:i]
	}
	switch {
	case host == "*":
		r.any = true
	case strings.Contains(host, "/"):
		p, err := netip.ParsePrefix(host)
		if err != nil {
			return r, fmt.Errorf("egress rule %q: bad CIDR: %w", s, err)
		}
		r.prefix = p.Masked()
	case isAddr(host):
		a, _ := netip.ParseAddr(host)
		r.prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
	case strings.HasPrefix(host, "*."):
		n, err := checkName(host[2:])
		if err != nil {
			return r, fmt.Errorf("egress rule %q: %w", s, err)
		}
		r.suffix = "." + n
	default:
		n, err := checkName(host)
		if err != nil {
			return r, fmt.Errorf("egress rule %q: %w", s, err)
		}
		r.name = n
	}
	return r, nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("bad port %q (want 1-65535)", s)
	}
	return p, nil
}

func isAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// checkName normalises a DNS name: lower case, no trailing dot, only
// letters, digits, '-', '_' and dots between non-empty labels.
func checkName(s string) (string, error) {
	s = strings.TrimSuffix(strings.ToLower(s), ".")
	if s == "" || len(s) > 253 {
		return "", fmt.Errorf("bad host name %q", s)
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("bad host name %q", s)
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("bad host name %q: character %q", s, c)
			}
		}
	}
	return s, nil
}

// matchName reports whether r matches the name (already normalised) on port.
func (r Rule) matchName(name string, port int) bool {
	if r.port != 0 && r.port != port {
		return false
	}
	switch {
	case r.any:
		return true
	case r.name != "":
		return r.name == name
	case r.suffix != "":
		return strings.HasSuffix(name, r.suffix)
	}
	return false
}

// matchAddr reports whether r matches the address on port. Name rules never
// match an address: allowing a name allows what it resolves to, and only
// through that name.
func (r Rule) matchAddr(a netip.Addr, port int) bool {
	if r.port != 0 && r.port != port {
		return false
	}
	if r.any {
		return true
	}
	return r.prefix.IsValid() && r.prefix.Contains(a)
}

// Policy is an allow list and a deny list. Nothing is allowed unless an
// allow rule matches, and a matching deny rule wins over any allow.
type Policy struct {
	Allow []Rule
	Deny  []Rule
}

// ParsePolicy parses the lists of a policy (api.NetworkPolicy).
func ParsePolicy(allow, deny []string) (Policy, error) {
	var p Policy
	for _, s := range allow {
		r, err := ParseRule(s)
		if err != nil {
			return Policy{}, err
		}
		p.Allow = append(p.Allow, r)
	}
	for _, s := range deny {
		r, err := ParseRule(s)
		if err != nil {
			return Policy{}, err
		}
		p.Deny = append(p.Deny, r)
	}
	if len(p.Allow)+len(p.Deny) > 1024 {
		return Policy{}, fmt.Errorf("egress policy: %d rules (max 1024)", len(p.Allow)+len(p.Deny))
	}
	return p, nil
}

// Strings returns the lists as text (for the API and the record).
func (p Policy) Strings() (allow, deny []string) {
	for _, r := range p.Allow {
		allow = append(allow, r.text)
	}
	for _, r := range p.Deny {
		deny = append(deny, r.text)
	}
	return allow, deny
}

// AllowAll is the policy that allows everything (the server's default
// ceiling when the operator sets none): the always-denied ranges still hold.
var AllowAll = Policy{Allow: []Rule{{text: "*", any: true}}}

// alwaysDenied are the ranges no policy reaches unless the operator allows
// them (warren serve --egress-allow-cidr): loopback, private, link-local
// (with the cloud metadata address), CGNAT, multicast and the rest of the
// special-purpose registries that are not the public internet.
var alwaysDenied = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "64:ff9b::/96", "100::/64", "2001:db8::/32", "fc00::/7", "fe80::/10", "ff00::/8",
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// special returns the always-denied range holding a, if any.
func special(a netip.Addr) (netip.Prefix, bool) {
	for _, p := range alwaysDenied {
		if p.Contains(a) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}
