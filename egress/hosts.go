package egress

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// ParseHosts reads a hosts(5) file: "ADDRESS NAME [ALIAS...]" per line,
// '#' to the end of a line a comment. A name on several lines keeps every
// address, in file order.
func ParseHosts(r io.Reader) (map[string][]netip.Addr, error) {
	hosts := map[string][]netip.Addr{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			return nil, fmt.Errorf("hosts line %d: bad address %q", line, f[0])
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("hosts line %d: address %s without a name", line, f[0])
		}
		for _, n := range f[1:] {
			name, err := checkName(n)
			if err != nil {
				return nil, fmt.Errorf("hosts line %d: %w", line, err)
			}
			hosts[name] = append(hosts[name], a.Unmap())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("hosts: %w", err)
	}
	return hosts, nil
}
