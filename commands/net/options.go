package net

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/optparse"
)

// What curl and wget share: their options mean the same request, so one
// reading of each serves both commands.

// info is a --version or --help text and the option key that asks for it
// (a short letter where the command has one: wget -V, -h).
type info struct{ key, text string }

// infoOption prints the version or the help text when opts ask for one
// (wherever it stands: the tools answer it before they act on anything
// else) and reports that it did.
func infoOption(inv *commands.Invocation, opts []optparse.Opt, texts ...info) bool {
	for _, o := range opts {
		for _, t := range texts {
			if o.Key == t.key {
				fmt.Fprintln(inv.Stdout, t.text)
				return true
			}
		}
	}
	return false
}

// parseHeader reads a "Name: value" option (curl -H, wget --header); ok is
// false without a colon.
func parseHeader(v string) (commands.HeaderField, bool) {
	name, val, ok := strings.Cut(v, ":")
	if !ok {
		return commands.HeaderField{}, false
	}
	return commands.HeaderField{Name: strings.TrimSpace(name), Value: strings.TrimSpace(val)}, true
}

// basicAuth is the Authorization header for "user:password" (curl -u,
// wget --user/--password).
func basicAuth(cred string) commands.HeaderField {
	return commands.HeaderField{Name: "Authorization", Value: "Basic " + base64.StdEncoding.EncodeToString([]byte(cred))}
}

// defaultHeader adds name: val unless the user set name already.
func (rq *request) defaultHeader(name, val string) {
	for _, h := range rq.header {
		if strings.EqualFold(h.Name, name) {
			return
		}
	}
	rq.header = append(rq.header, commands.HeaderField{Name: name, Value: val})
}

// parseSeconds reads a time in (fractional) seconds (curl -m, wget -T).
func parseSeconds(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// fetchRetrying is fetch with up to retries more attempts after a
// transient failure (retryable); wait says how long to wait after failed
// attempt try (0-based) and may report it. A done ctx ends the waiting.
func fetchRetrying(ctx context.Context, client commands.HTTPClient, raw string, rq request, retries int, wait func(try int, err error, status int) time.Duration) (result, error) {
	for try := 0; ; try++ {
		res, err := fetch(ctx, client, raw, rq)
		st := 0
		if res.resp != nil && err == nil {
			st = res.resp.Status
		}
		if try >= retries || !retryable(err, st) {
			return res, err
		}
		if res.resp != nil && err == nil {
			res.resp.Body.Close()
		}
		if !sleep(ctx, wait(try, err, st)) {
			return res, err
		}
	}
}
