package sandbox

import (
	"context"
	"sync"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/shell"
)

// The execution ladder's plumbing (DESIGN.md "The execution ladder"): a
// sandbox's commands policy (CreateRequest.Commands) becomes its sessions'
// shell.Config.Policy, an exec's own (ExecRequest.Commands) travels in the
// Run's context, and the rungs each exec used are counted per exec
// (ExecResult.Rungs, .Fallbacks) and per node (Stats, /metrics).

// CommandsPolicy parses a commands policy as the API takes it.
func CommandsPolicy(s string) (shell.Policy, error) {
	p, err := shell.ParsePolicy(s)
	if err != nil {
		return shell.Policy{}, api.Errorf(api.ErrUnprocessable, "%v", err)
	}
	return p, nil
}

// defaultCommands is the policy of a sandbox created without one.
var defaultCommands = shell.Policy{}.String()

// ladderCounts are the node's totals (Stats.Rungs, Stats.Fallbacks).
type ladderCounts struct {
	mu        sync.Mutex
	rungs     map[string]uint64
	fallbacks map[string]uint64
}

// execLadder prepares ctx for one exec of req: its policy and a Stats the
// shell fills.
func execLadder(ctx context.Context, req api.ExecRequest) (context.Context, *shell.Stats, error) {
	if req.Commands != "" {
		p, err := CommandsPolicy(req.Commands)
		if err != nil {
			return ctx, nil, err
		}
		ctx = shell.WithPolicy(ctx, p)
	}
	st := &shell.Stats{}
	return shell.WithStats(ctx, st), st, nil
}

// record puts st into res and the node's totals.
func (c *ladderCounts) record(st *shell.Stats, res *api.ExecResult) {
	rungs, fbs := st.Rungs(), st.Fallbacks()
	if len(rungs)+len(fbs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rungs == nil {
		c.rungs, c.fallbacks = map[string]uint64{}, map[string]uint64{}
	}
	for r, n := range rungs {
		if res.Rungs == nil {
			res.Rungs = map[string]int64{}
		}
		res.Rungs[string(r)] = n
		c.rungs[string(r)] += uint64(n)
	}
	for name, n := range fbs {
		if res.Fallbacks == nil {
			res.Fallbacks = map[string]int64{}
		}
		res.Fallbacks[name] = n
		// names come from scripts: bound the series an operator sees
		if _, ok := c.fallbacks[name]; !ok && len(c.fallbacks) >= maxFallbackSeries {
			name = "other"
		}
		c.fallbacks[name] += uint64(n)
	}
}

const maxFallbackSeries = 256

func (c *ladderCounts) snapshot() (rungs, fallbacks map[string]uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rungs, fallbacks = make(map[string]uint64, len(c.rungs)), make(map[string]uint64, len(c.fallbacks))
	for k, v := range c.rungs {
		rungs[k] = v
	}
	for k, v := range c.fallbacks {
		fallbacks[k] = v
	}
	return rungs, fallbacks
}
