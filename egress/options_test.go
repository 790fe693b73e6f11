package egress

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOptions_Build(t *testing.T) {
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	os.WriteFile(hosts, []byte("127.0.0.2 api.test\n"), 0o644)
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("nonsense\n"), 0o644)
	for _, c := range []struct {
		name string
		o    Options
		err  string
	}{
		{"empty", Options{}, ""},
		{"full", Options{AllowCIDRs: []string{"127.0.0.0/8", "10.1.2.3"}, HostsFile: hosts, HostsOnly: true, Allow: []string{"*.test"}, Deny: []string{"evil.test"}, Insecure: true}, ""},
		{"bad cidr", Options{AllowCIDRs: []string{"10.0.0.0/99"}}, "--egress-allow-cidr"},
		{"missing hosts", Options{HostsFile: filepath.Join(dir, "nope")}, "--egress-hosts"},
		{"bad hosts", Options{HostsFile: bad}, "bad address"},
		{"bad rule", Options{Deny: []string{"a b"}}, "--egress-allow/--egress-deny"},
		{"bad ca", Options{CAFile: hosts}, "no PEM certificates"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := c.o.Build()
			if c.err == "" && (err != nil || e == nil) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("Build = %v, want error %q", err, c.err)
			}
			if err != nil {
				return
			}
			// Args round-trips through the same flags.
			for _, a := range c.o.Args() {
				if !strings.HasPrefix(a, "--egress-") {
					t.Fatalf("arg %q", a)
				}
			}
		})
	}
	e, _ := Options{AllowCIDRs: []string{"127.0.0.0/8"}, HostsFile: hosts, HostsOnly: true}.Build()
	s := e.Sandbox("sb", mustPolicy(t, []string{"api.test", "other.test"}, nil))
	if addrs, err := s.Check(t.Context(), "api.test", 80); err != nil || addrs[0].String() != "127.0.0.2" {
		t.Fatalf("hosts file not used: %v %v", addrs, err)
	}
	var re *ResolveError
	if _, err := s.Check(t.Context(), "other.test", 80); !errors.As(err, &re) || !strings.Contains(err.Error(), "not in the egress hosts file") {
		t.Fatalf("hosts-only lookup of a name outside the file: %v", err)
	}
}
