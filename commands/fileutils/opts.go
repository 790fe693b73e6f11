package fileutils

import "github.com/warren-sandbox/warren/commands/optparse"

// The option parser is shared by the resident commands (commands/optparse).
type (
	optSet     = optparse.Set
	opt        = optparse.Opt
	usageError = optparse.UsageError
)

func newOpts(short string, longs ...string) *optSet { return optparse.New(short, longs...) }
