// Package net holds curl and wget over the sandbox's network
// (commands.System.Net, package egress under the sandbox's policy). A
// sandbox without one fails the way the real tools fail with no network
// (curl status 6/7, wget status 4), saying why. curl also reads file://
// URLs from the sandbox filesystem.
package net

import (
	"net/url"
	"strings"

	"github.com/warren-sandbox/warren/commands"
)

// Register adds curl and wget to t.
func Register(t commands.Table) {
	// Bodies read from files are charged to the sandbox's memory budget.
	t.Register("curl", commands.Reserving(curl))
	t.Register("wget", commands.Reserving(wget))
}

const disabled = "network disabled for this sandbox"

func isIP(h string) bool {
	if strings.Contains(h, ":") {
		return true
	}
	parts := strings.Split(h, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}
