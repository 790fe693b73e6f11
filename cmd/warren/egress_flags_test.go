package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestNetworkFlags(t *testing.T) {
	for _, c := range []struct {
		name    string
		nf      networkFlags
		err     string
		secrets string // name=value@hosts, joined
	}{
		{"none", networkFlags{}, "", ""},
		{"secret", networkFlags{allow: []string{"api.test"}, secrets: []string{"T=a@b=c@api.test,www.api.test"}}, "", "T=a@b=c@api.test,www.api.test"},
		{"no host", networkFlags{secrets: []string{"T=value"}}, "want NAME=VALUE@HOST", ""},
		{"empty host", networkFlags{secrets: []string{"T=value@"}}, "want NAME=VALUE@HOST", ""},
		{"no name", networkFlags{secrets: []string{"=v@h"}}, "want NAME=VALUE@HOST", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			pol, specs, err := c.nf.request()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				if strings.Contains(err.Error(), "value") && strings.Contains(c.nf.secrets[0], "value") && strings.Contains(err.Error(), "=value") {
					t.Fatalf("the error shows the secret's value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (pol != nil) != (len(c.nf.allow)+len(c.nf.deny) > 0) {
				t.Fatalf("policy %+v", pol)
			}
			var got []string
			for _, s := range specs {
				got = append(got, s.Name+"="+s.Value+"@"+strings.Join(s.Hosts, ","))
			}
			if strings.Join(got, " ") != c.secrets {
				t.Fatalf("secrets %q, want %q", got, c.secrets)
			}
		})
	}
}

// TestServe_BadEgressFlags: serve refuses bad --egress-* values naming the
// flag, before it opens anything.
func TestServe_BadEgressFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--egress-allow-cidr", "10.0.0.0/99"}, "--egress-allow-cidr"},
		{[]string{"--egress-hosts", filepath.Join(t.TempDir(), "missing")}, "--egress-hosts"},
		{[]string{"--egress-deny", "a b"}, "--egress-deny"},
	} {
		root := newRoot()
		var out, errb bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errb)
		root.SetArgs(append([]string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--workers", "0", "--no-native"}, c.args...))
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
}
