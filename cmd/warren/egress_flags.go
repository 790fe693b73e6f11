package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/egress"
)

// addEgressFlags adds serve's --egress-* flags (README "Network").
func addEgressFlags(cmd *cobra.Command, o *egress.Options) {
	f := cmd.Flags()
	u := egress.Usage
	f.StringArrayVar(&o.AllowCIDRs, "egress-allow-cidr", nil, u["egress-allow-cidr"])
	f.StringVar(&o.HostsFile, "egress-hosts", "", u["egress-hosts"])
	f.BoolVar(&o.HostsOnly, "egress-hosts-only", false, u["egress-hosts-only"])
	f.StringArrayVar(&o.Allow, "egress-allow", nil, u["egress-allow"])
	f.StringArrayVar(&o.Deny, "egress-deny", nil, u["egress-deny"])
	f.StringVar(&o.CAFile, "egress-ca", "", u["egress-ca"])
	f.BoolVar(&o.Insecure, "egress-allow-insecure", false, u["egress-allow-insecure"])
}

// networkFlags are `warren sandbox create`'s network flags.
type networkFlags struct {
	allow, deny, secrets []string
}

func (n *networkFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&n.allow, "allow-host", nil, "let the sandbox reach HOST: a name, *.suffix, address or CIDR, optionally :PORT (repeatable; default: no network)")
	f.StringArrayVar(&n.deny, "deny-host", nil, "deny HOST even when an --allow-host matches it (repeatable)")
	f.StringArrayVar(&n.secrets, "secret", nil, "NAME=VALUE@HOST[,HOST...]: the sandbox's env gets a placeholder for NAME, swapped for VALUE only on HTTPS requests to HOST (repeatable)")
}

// request builds the create request's network and secrets.
func (n *networkFlags) request() (*api.NetworkPolicy, []api.SecretSpec, error) {
	var pol *api.NetworkPolicy
	if len(n.allow)+len(n.deny) > 0 {
		pol = &api.NetworkPolicy{Allow: n.allow, Deny: n.deny}
	}
	var specs []api.SecretSpec
	for _, s := range n.secrets {
		name, rest, ok := strings.Cut(s, "=")
		at := strings.LastIndex(rest, "@")
		if !ok || name == "" || at <= 0 || at == len(rest)-1 {
			return nil, nil, fmt.Errorf("--secret %q: want NAME=VALUE@HOST[,HOST...]", redact(s))
		}
		specs = append(specs, api.SecretSpec{Name: name, Value: rest[:at], Hosts: strings.Split(rest[at+1:], ",")})
	}
	return pol, specs, nil
}

// redact keeps a secret's value out of an error message.
func redact(s string) string {
	name, _, _ := strings.Cut(s, "=")
	return name + "=…"
}
