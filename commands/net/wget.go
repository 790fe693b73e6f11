package net

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/optparse"
	"github.com/warren-sandbox/warren/commands/sysinfo"
	"github.com/warren-sandbox/warren/vfs"
)

var wgetOpts = optparse.New("qO:o:P:U:t:T:SVhcNnv",
	"quiet:q", "output-document=:O", "output-file=:o", "directory-prefix=:P", "user-agent=:U",
	"header=", "tries=:t", "timeout=:T", "post-data=", "post-file=", "method=", "body-data=",
	"no-check-certificate", "server-response:S", "user=", "password=", "max-redirect=",
	"continue:c", "timestamping:N", "no-verbose", "spider", "version:V", "help:h",
	"no-clobber", "content-disposition", "progress=", "show-progress", "no-hsts",
	"https-only", "inet4-only", "retry-connrefused", "waitretry=", "read-timeout=", "dns-timeout=",
	"connect-timeout=",
)

// wget's exit statuses.
const (
	wgetGeneric = 1
	wgetIO      = 3
	wgetNetwork = 4
	wgetSSL     = 5
	wgetServer  = 8
)

func wget(ctx context.Context, inv *commands.Invocation) int {
	// -nv is one option to wget; getopt would read it as -n -v.
	args := make([]string, 0, len(inv.Args))
	for _, a := range inv.Args[1:] {
		if a == "-nv" {
			a = "--no-verbose"
		}
		args = append(args, a)
	}
	opts, urls, err := wgetOpts.Parse(args)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "wget: %s\nUsage: wget [OPTION]... [URL]...\n\nTry `wget --help' for more options.\n", err)
		return 2
	}
	quiet, spider, showResp := false, false, false
	doc, prefix, user, pass := "", "", "", ""
	tries := 1
	var timeout time.Duration
	rq := request{method: "GET", follow: true, maxRedir: 20}
	// wget's --version and --help are -V and -h (the keys optparse gives).
	if infoOption(inv, opts, info{"V", "GNU Wget 1.21.3 (warren sandbox: through the egress policy)"}, info{"h", "Usage: wget [OPTION]... [URL]..."}) {
		return 0
	}
	for _, o := range opts {
		switch o.Key {
		case "q":
			quiet = true
		case "O":
			doc = o.Val
		case "P":
			prefix = o.Val
		case "U":
			rq.header = append(rq.header, commands.HeaderField{Name: "User-Agent", Value: o.Val})
		case "header":
			if h, ok := parseHeader(o.Val); ok {
				rq.header = append(rq.header, h)
			}
		case "t":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				fmt.Fprintf(inv.Stderr, "wget: --tries: Invalid number %q.\n", o.Val)
				return 2
			}
			tries = min(max(n, 1), 10)
		case "T":
			d, ok := parseSeconds(o.Val)
			if !ok {
				fmt.Fprintf(inv.Stderr, "wget: --timeout: Invalid time period %q.\n", o.Val)
				return 2
			}
			timeout = d
		case "post-data", "body-data":
			rq.body, rq.hasBody = []byte(o.Val), true
			if o.Key == "post-data" {
				rq.method = "POST"
			}
		case "post-file":
			b, err := readData(ctx, inv, o.Val)
			if err != nil {
				if code, ok := inv.LimitExceeded(err); ok {
					return code
				}
				fmt.Fprintf(inv.Stderr, "wget: %s\n", commands.Describe(err))
				return wgetIO
			}
			rq.body, rq.hasBody, rq.method = b, true, "POST"
		case "method":
			rq.method = strings.ToUpper(o.Val)
		case "no-check-certificate":
			rq.insecure = true
		case "S":
			showResp = true
		case "user":
			user = o.Val
		case "password":
			pass = o.Val
		case "max-redirect":
			if n, err := strconv.Atoi(o.Val); err == nil && n >= 0 {
				rq.maxRedir = n
			}
		case "spider":
			spider = true
			rq.method = "HEAD"
		case "o":
			fmt.Fprintln(inv.Stderr, "wget: -o/--output-file: logs go to stderr in the sandbox")
			return wgetGeneric
		}
	}
	if rq.hasBody {
		rq.defaultHeader("Content-Type", "application/x-www-form-urlencoded")
	}
	if user != "" || pass != "" {
		rq.header = append(rq.header, basicAuth(user+":"+pass))
	}
	if len(urls) == 0 {
		fmt.Fprintln(inv.Stderr, "wget: missing URL")
		fmt.Fprintln(inv.Stderr, "Usage: wget [OPTION]... [URL]...")
		fmt.Fprintln(inv.Stderr, "")
		fmt.Fprintln(inv.Stderr, "Try `wget --help' for more options.")
		return 1
	}
	w := &wgetRun{inv: inv, quiet: quiet, spider: spider, showResp: showResp, doc: doc, prefix: prefix, tries: tries, timeout: timeout, rq: rq}
	if doc != "" && doc != "-" {
		// -O FILE: every document goes into one file, truncated once.
		f, err := inv.OpenFile(doc, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "%s: %s\n", doc, commands.Describe(err))
			return wgetIO
		}
		defer f.Close()
		w.docFile = f
	}
	status := 0
	for _, raw := range urls {
		if st := w.one(ctx, raw); st != 0 {
			status = st
		}
		if ctx.Err() != nil {
			return 130
		}
	}
	return status
}

type wgetRun struct {
	inv                     *commands.Invocation
	quiet, spider, showResp bool
	doc, prefix             string
	docFile                 commands.File
	tries                   int
	timeout                 time.Duration
	rq                      request
}

func (w *wgetRun) logf(format string, args ...any) {
	if !w.quiet {
		fmt.Fprintf(w.inv.Stderr, format, args...)
	}
}

func (w *wgetRun) one(ctx context.Context, raw string) int {
	inv := w.inv
	u, err := url.Parse(raw)
	if err == nil && u.Scheme == "" {
		u, err = url.Parse("http://" + raw)
	}
	if err != nil || u.Hostname() == "" {
		fmt.Fprintf(inv.Stderr, "%s: Invalid URL %s: Invalid host name.\n", raw, raw)
		return wgetGeneric
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		fmt.Fprintf(inv.Stderr, "%s: Unsupported scheme %q.\n", raw, u.Scheme)
		return wgetGeneric
	}
	now := func() string { return sysinfo.Strftime("%Y-%m-%d %H:%M:%S", inv.Now().In(sysinfo.Location(inv))) }
	host := u.Hostname()
	w.logf("--%s--  %s\n", now(), u.String())
	var client commands.HTTPClient
	if inv.Sys != nil {
		client = inv.Sys.Net
	}
	if client == nil {
		if isIP(host) {
			w.logf("Connecting to %s:%s... failed: %s.\n", host, portOf(u), disabled)
			return wgetNetwork
		}
		w.logf("Resolving %s (%s)... failed: %s.\n", host, host, disabled)
		fmt.Fprintf(inv.Stderr, "wget: unable to resolve host address '%s'\n", host)
		return wgetNetwork
	}
	if w.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.timeout)
		defer cancel()
	}
	res, err := fetchRetrying(ctx, client, u.String(), w.rq, w.tries-1, func(try int, _ error, _ int) time.Duration {
		return time.Duration(try+1) * time.Second // wget's linear backoff
	})
	if err != nil {
		code, msg := netCode(err)
		switch code {
		case commands.NetResolve:
			w.logf("Resolving %s (%s)... failed: Name or service not known.\n", host, host)
			fmt.Fprintf(inv.Stderr, "wget: unable to resolve host address '%s'\n", host)
			return wgetNetwork
		case commands.NetCert, commands.NetTLS, commands.NetInsecure:
			fmt.Fprintf(inv.Stderr, "ERROR: cannot verify %s's certificate: %s\n", host, msg)
			return wgetSSL
		case commands.NetConnect:
			// Quiet or not, a refusal names the policy: a script must see why.
			fmt.Fprintf(inv.Stderr, "Connecting to %s:%s... failed: %s.\n", host, portOf(u), msg)
			return wgetNetwork
		}
		fmt.Fprintf(inv.Stderr, "wget: %s\n", msg)
		return wgetNetwork
	}
	resp := res.resp
	defer resp.Body.Close()
	w.logf("HTTP request sent, awaiting response... %d %s\n", resp.Status, resp.Reason)
	if w.showResp {
		fmt.Fprintf(inv.Stderr, "  %s\n", statusLine(resp))
		for _, h := range resp.Header {
			fmt.Fprintf(inv.Stderr, "  %s: %s\n", h.Name, h.Value)
		}
	}
	if resp.Status >= 400 {
		fmt.Fprintf(inv.Stderr, "%s ERROR %d: %s.\n", now(), resp.Status, resp.Reason)
		return wgetServer
	}
	if w.spider {
		w.logf("Remote file exists.\n\n")
		return 0
	}
	var dst io.Writer
	name := w.doc
	switch {
	case w.docFile != nil:
		dst = w.docFile
	case w.doc == "-":
		dst = inv.Stdout
	default:
		final, _ := url.Parse(res.url)
		name = path.Base(final.Path)
		if name == "/" || name == "." || name == "" {
			name = "index.html"
		}
		if w.prefix != "" {
			name = path.Join(w.prefix, name)
			inv.FS.MkdirAll(inv.Abs(w.prefix), 0o755)
		}
		f, err := inv.OpenFile(name, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "%s: %s\n", name, commands.Describe(err))
			return wgetIO
		}
		defer f.Close()
		dst = f
	}
	w.logf("Saving to: '%s'\n\n", name)
	n, err := io.Copy(dst, resp.Body)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "wget: %s: %s\n", name, commands.Describe(err))
		if ctx.Err() != nil {
			return wgetNetwork
		}
		return wgetIO
	}
	w.logf("%s - '%s' saved [%d]\n\n", now(), name, n)
	return 0
}
