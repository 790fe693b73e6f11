package egress

import (
	"context"
	"net/netip"
	"strings"
	"testing"
)

// FuzzCheck: any rule and any host give a decision, never a panic, and an
// allowed address is never in an always-denied range the operator did not
// open. (go test runs the seeds; scripts/fuzz.sh runs it longer.)
func FuzzCheck(f *testing.F) {
	for _, s := range [][2]string{
		{"*", "10.0.0.1"}, {"*.test", "a.test"}, {"10.0.0.0/8", "10.1.1.1"}, {"[::1]:443", "::1"},
		{"*", "::ffff:169.254.169.254"}, {"api.test:443", "API.TEST."}, {"*", "[fe80::1%eth0]"},
		{"0.0.0.0/0", "127.0.0.1"}, {"::/0", "fd00::1"}, {"*", "rebind.test"},
	} {
		f.Add(s[0], s[1], uint16(443))
	}
	hosts := map[string][]netip.Addr{"rebind.test": {netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("8.8.8.8")}}
	f.Fuzz(func(t *testing.T, rule, host string, port uint16) {
		if port == 0 {
			port = 1
		}
		p, err := ParsePolicy(strings.Split(rule, ","), nil)
		if err != nil {
			return
		}
		s := New(Config{Hosts: hosts, HostsOnly: true}).Sandbox("fuzz", p)
		addrs, err := s.Check(context.Background(), host, int(port))
		if err != nil {
			return
		}
		for _, a := range addrs {
			if pfx, bad := special(a); bad {
				t.Fatalf("rule %q host %q: allowed %s in %s", rule, host, a, pfx)
			}
		}
	})
}
