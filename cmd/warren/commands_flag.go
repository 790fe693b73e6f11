package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"github.com/warren-sandbox/warren/shell"
)

// commandsFlags are --commands POLICY and --prefer-native NAME, shared by
// `warren run`, `sandbox create` and `sandbox exec` (README "Choosing
// where commands run").
type commandsFlags struct {
	policy string
	native []string
}

func (f *commandsFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.policy, "commands", "", "commands policy: resident-first (default), native-first or resident-only, plus NAME=native|resident|resident-only overrides, comma-separated")
	fs.StringArrayVar(&f.native, "prefer-native", nil, "run NAME's binary from the image before warren's resident NAME (repeatable; same as --commands NAME=native)")
}

// value is the policy the flags say, checked ("" when none is given).
func (f *commandsFlags) value() (string, error) {
	items := []string{}
	if f.policy != "" {
		items = append(items, f.policy)
	}
	for _, n := range f.native {
		items = append(items, n+"=native")
	}
	s := strings.Join(items, ",")
	if _, err := shell.ParsePolicy(s); err != nil {
		return "", fmt.Errorf("--commands/--prefer-native: %w", err)
	}
	return s, nil
}
