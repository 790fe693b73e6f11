package net

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/optparse"
	"github.com/warren-sandbox/warren/vfs"
)

var curlOpts = optparse.New("sSfLo:OX:H:d:F:u:Iiw:km:vA:e:b:x:T:gGD:#",
	"silent:s", "show-error:S", "fail:f", "fail-with-body", "location:L", "location-trusted",
	"output=:o", "remote-name:O", "request=:X", "header=:H", "data=:d", "data-ascii=:d",
	"data-binary=", "data-raw=", "data-urlencode=", "json=", "form=:F", "user=:u", "head:I",
	"include:i", "write-out=:w", "insecure:k", "max-time=:m", "connect-timeout=", "retry=",
	"retry-delay=", "retry-max-time=", "retry-connrefused", "retry-all-errors", "verbose:v",
	"user-agent=:A", "referer=:e", "cookie=:b", "proxy=:x", "upload-file=:T", "globoff:g",
	"get:G", "dump-header=:D", "progress-bar:#", "compressed", "max-redirs=", "noproxy=",
	"url=", "http1.1", "http2", "tlsv1.2", "no-progress-meter", "create-dirs", "oauth2-bearer=",
	"output-dir=", "version", "help", "no-buffer", "tcp-nodelay", "ipv4", "ipv6", "ssl-reqd",
)

type curlRun struct {
	inv                           *commands.Invocation
	silent, showErr, fail, failWB bool
	include, head, verbose, get   bool
	createDirs                    bool
	outputs                       []string // -o per URL, "" for -O
	remoteAll                     bool
	writeOut                      string
	maxTime                       time.Duration
	retries                       int
	retryDelay                    time.Duration
	outputDir                     string
	rq                            request
	form                          []string
	data                          []string // joined with '&'
	json                          bool
}

func curl(ctx context.Context, inv *commands.Invocation) int {
	opts, operands, err := curlOpts.Parse(inv.Args[1:])
	if err != nil {
		fmt.Fprintf(inv.Stderr, "curl: %s\ncurl: try 'curl --help' or 'curl --manual' for more information\n", err)
		return 2
	}
	c := &curlRun{inv: inv, rq: request{method: "", maxRedir: 50}, retryDelay: -1}
	urls := operands
	if infoOption(inv, opts, info{"version", "curl 8.5.0 (x86_64-pc-linux-gnu) warren-sandbox\nProtocols: file http https\nFeatures: egress-policy"},
		info{"help", "Usage: curl [options...] <url>\nRequests go through the sandbox's egress policy; file:// URLs read the sandbox filesystem."}) {
		return 0
	}
	for _, o := range opts {
		switch o.Key {
		case "s":
			c.silent = true
		case "S":
			c.showErr = true
		case "f":
			c.fail = true
		case "fail-with-body":
			c.failWB = true
		case "L":
			c.rq.follow = true
		case "location-trusted":
			c.rq.follow, c.rq.trusted = true, true
		case "o":
			c.outputs = append(c.outputs, o.Val)
		case "O":
			c.outputs = append(c.outputs, "")
		case "X":
			c.rq.method = o.Val
		case "H":
			h, ok := parseHeader(o.Val)
			if !ok {
				if n, ok := strings.CutSuffix(o.Val, ";"); ok {
					c.rq.header = append(c.rq.header, commands.HeaderField{Name: n})
				}
				continue
			}
			c.rq.header = append(c.rq.header, h)
		case "d", "data-binary", "data-raw", "data-urlencode", "json":
			v := o.Val
			if o.Key != "data-raw" && o.Key != "data-urlencode" && strings.HasPrefix(v, "@") {
				b, err := readData(ctx, inv, v[1:])
				if err != nil {
					if code, ok := inv.LimitExceeded(err); ok {
						return code
					}
					return c.failf(26, "Failed to open/read local data from file/application")
				}
				v = string(b)
				if o.Key == "d" {
					v = strings.NewReplacer("\r", "", "\n", "").Replace(v)
				}
			}
			if o.Key == "data-urlencode" {
				v = urlencode(ctx, inv, v)
			}
			c.json = c.json || o.Key == "json"
			c.data = append(c.data, v)
		case "F":
			c.form = append(c.form, o.Val)
		case "u":
			c.rq.header = append(c.rq.header, basicAuth(o.Val))
		case "oauth2-bearer":
			c.rq.header = append(c.rq.header, commands.HeaderField{Name: "Authorization", Value: "Bearer " + o.Val})
		case "I":
			c.head = true
		case "i":
			c.include = true
		case "w":
			c.writeOut = o.Val
		case "k":
			c.rq.insecure = true
		case "m", "connect-timeout":
			d, ok := parseSeconds(o.Val)
			if !ok {
				fmt.Fprintf(inv.Stderr, "curl: option --max-time: expected a proper numerical parameter\n")
				return 2
			}
			if o.Key == "m" || c.maxTime == 0 {
				c.maxTime = d
			}
		case "retry":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				fmt.Fprintf(inv.Stderr, "curl: option --retry: expected a proper numerical parameter\n")
				return 2
			}
			c.retries = min(n, 10)
		case "retry-delay":
			n, err := strconv.Atoi(o.Val)
			if err != nil || n < 0 {
				fmt.Fprintf(inv.Stderr, "curl: option --retry-delay: expected a proper numerical parameter\n")
				return 2
			}
			c.retryDelay = time.Duration(n) * time.Second
		case "max-redirs":
			n, err := strconv.Atoi(o.Val)
			if err != nil {
				fmt.Fprintf(inv.Stderr, "curl: option --max-redirs: expected a proper numerical parameter\n")
				return 2
			}
			if n < 0 {
				n = 1 << 20
			}
			c.rq.maxRedir = n
		case "v":
			c.verbose = true
		case "A":
			c.rq.header = append(c.rq.header, commands.HeaderField{Name: "User-Agent", Value: o.Val})
		case "e":
			c.rq.header = append(c.rq.header, commands.HeaderField{Name: "Referer", Value: o.Val})
		case "b":
			if !strings.Contains(o.Val, "=") {
				continue // a cookie file: no cookie engine here
			}
			c.rq.header = append(c.rq.header, commands.HeaderField{Name: "Cookie", Value: o.Val})
		case "x":
			return c.failf(5, "Could not resolve proxy: the sandbox's egress policy is its only way out (no -x/--proxy)")
		case "T":
			return c.failf(1, "-T/--upload-file is not supported by this curl")
		case "G":
			c.get = true
		case "url":
			urls = append(urls, o.Val)
		case "output-dir":
			c.outputDir = o.Val
		case "create-dirs":
			c.createDirs = true
		}
	}
	if len(urls) == 0 {
		fmt.Fprintln(inv.Stderr, "curl: no URL specified!")
		fmt.Fprintln(inv.Stderr, "curl: try 'curl --help' or 'curl --manual' for more information")
		return 2
	}
	if err := c.buildBody(ctx); err != nil {
		if code, ok := inv.LimitExceeded(err); ok {
			return code
		}
		return c.failf(26, err.Error())
	}
	if c.maxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.maxTime)
		defer cancel()
	}
	status := 0
	for i, raw := range urls {
		out, remote := "", false
		if i < len(c.outputs) {
			out, remote = c.outputs[i], c.outputs[i] == ""
		}
		if st := c.one(ctx, raw, out, remote); st != 0 {
			status = st
		}
		if ctx.Err() != nil && c.maxTime == 0 {
			return 130
		}
	}
	return status
}

// buildBody turns -d/-F/--json into the request body and its headers.
func (c *curlRun) buildBody(ctx context.Context) error {
	switch {
	case len(c.form) > 0 && len(c.data) > 0:
		return errors.New("You can only select one HTTP request method! You asked for both POST (-d) and multipart formpost (-F)")
	case len(c.form) > 0:
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for _, f := range c.form {
			name, val, ok := strings.Cut(f, "=")
			if !ok {
				return fmt.Errorf("bad -F argument %q: want name=value or name=@file", f)
			}
			if file, ok := strings.CutPrefix(val, "@"); ok {
				file, ctype, _ := strings.Cut(file, ";type=")
				data, err := c.readPart(ctx, file)
				if err != nil {
					return err
				}
				h := textproto.MIMEHeader{}
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, name, path.Base(file)))
				if ctype == "" {
					ctype = "application/octet-stream"
				}
				h.Set("Content-Type", ctype)
				w, _ := mw.CreatePart(h)
				w.Write(data)
				continue
			}
			if file, ok := strings.CutPrefix(val, "<"); ok {
				data, err := c.readPart(ctx, file)
				if err != nil {
					return err
				}
				val = string(data)
			}
			mw.WriteField(name, val)
		}
		mw.Close()
		if res := commands.ReservationFrom(ctx); res != nil {
			if err := res.Grow(int64(buf.Len())); err != nil { // the form holds a copy of each part
				return err
			}
		}
		c.rq.body, c.rq.hasBody = buf.Bytes(), true
		c.defaultHeader("Content-Type", mw.FormDataContentType())
	case len(c.data) > 0 && c.get:
		// -G: the data goes in the query (added per URL in one()).
	case len(c.data) > 0:
		c.rq.body, c.rq.hasBody = []byte(strings.Join(c.data, "&")), true
		if c.json {
			c.defaultHeader("Content-Type", "application/json")
			c.defaultHeader("Accept", "application/json")
		} else {
			c.defaultHeader("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if c.rq.method == "" {
		switch {
		case c.head:
			c.rq.method = "HEAD"
		case c.rq.hasBody:
			c.rq.method = "POST"
		default:
			c.rq.method = "GET"
		}
	}
	return nil
}

func (c *curlRun) defaultHeader(name, val string) { c.rq.defaultHeader(name, val) }

// readPart reads a -F part's file (name=@file, name=<file).
func (c *curlRun) readPart(ctx context.Context, file string) ([]byte, error) {
	data, err := readData(ctx, c.inv, file)
	if err != nil {
		if errors.Is(err, commands.ErrMemoryLimit) {
			return nil, err
		}
		return nil, fmt.Errorf("Failed to open/read local data from file/application: %s", commands.Describe(err))
	}
	return data, nil
}

func (c *curlRun) failf(code int, msg string) int {
	if !c.silent || c.showErr {
		fmt.Fprintf(c.inv.Stderr, "curl: (%d) %s\n", code, msg)
	}
	return code
}

// one transfers one URL (with --retry) and returns its status.
func (c *curlRun) one(ctx context.Context, raw, out string, remote bool) int {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return c.failf(3, "URL using bad/illegal format or missing URL")
	}
	if u.Scheme == "" {
		u, err = url.Parse("http://" + raw)
		if err != nil {
			return c.failf(3, "URL using bad/illegal format or missing URL")
		}
	}
	if remote {
		out = path.Base(u.Path)
		if out == "/" || out == "." || out == "" {
			return c.failf(23, "Remote file name has no length")
		}
	}
	if out != "" && c.outputDir != "" && !strings.HasPrefix(out, "/") {
		out = path.Join(c.outputDir, out)
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		data, err := c.inv.FS.ReadFile(u.Path)
		if err != nil {
			return c.failf(37, fmt.Sprintf("Couldn't open file %s", u.Path))
		}
		return c.write(out, bytes.NewReader(data))
	case "http", "https":
	default:
		return c.failf(1, fmt.Sprintf("Protocol \"%s\" not supported", u.Scheme))
	}
	if u.Hostname() == "" {
		return c.failf(3, "URL using bad/illegal format or missing URL")
	}
	host, port := hostPort(u)
	client := c.client()
	if client == nil {
		if isIP(host) || host == "localhost" {
			return c.failf(7, fmt.Sprintf("Failed to connect to %s port %s after 0 ms: Couldn't connect to server (%s)", host, port, disabled))
		}
		return c.failf(6, fmt.Sprintf("Could not resolve host: %s (%s)", host, disabled))
	}
	if c.get && len(c.data) > 0 {
		q := strings.Join(c.data, "&")
		if u.RawQuery != "" {
			q = u.RawQuery + "&" + q
		}
		u.RawQuery = q
	}
	delay := c.retryDelay
	if delay < 0 {
		delay = time.Second // curl's default, doubling per retry
	}
	start := time.Now()
	res, err := fetchRetrying(ctx, client, u.String(), c.rq, c.retries, func(try int, err error, st int) time.Duration {
		if !c.silent {
			fmt.Fprintf(c.inv.Stderr, "Warning: Problem : %s. Will retry in %d seconds. %d retries left.\n", retryWhy(err, st), int(delay/time.Second), c.retries-try)
		}
		d := delay
		if c.retryDelay < 0 {
			delay *= 2
		}
		return d
	})
	ms := time.Since(start).Milliseconds()
	if err != nil {
		code, msg := netCode(err)
		c.writeOutFor(result{url: res.url, redirects: res.redirects}, 0, code)
		if hop, perr := url.Parse(res.url); perr == nil {
			host, port = hostPort(hop) // the hop that failed, maybe a redirect's
		}
		switch code {
		case commands.NetConnect:
			msg = fmt.Sprintf("Failed to connect to %s port %s after %d ms: %s", host, port, ms, msg)
		case commands.NetTimeout:
			msg = fmt.Sprintf("Operation timed out after %d milliseconds", ms)
		}
		return c.failf(code, msg)
	}
	resp := res.resp
	defer resp.Body.Close()
	if c.verbose {
		fmt.Fprintf(c.inv.Stderr, "> %s %s\n", c.rq.method, u.RequestURI())
		for _, h := range c.rq.header {
			fmt.Fprintf(c.inv.Stderr, "> %s: %s\n", h.Name, h.Value)
		}
		fmt.Fprintf(c.inv.Stderr, "< %s\n", statusLine(resp))
		for _, h := range resp.Header {
			fmt.Fprintf(c.inv.Stderr, "< %s: %s\n", h.Name, h.Value)
		}
	}
	if (c.fail || c.failWB) && resp.Status >= 400 {
		if c.failWB {
			c.write(out, resp.Body)
		}
		c.writeOutFor(res, 0, 22)
		return c.failf(22, fmt.Sprintf("The requested URL returned error: %d", resp.Status))
	}
	var head bytes.Buffer
	if c.include || c.head {
		fmt.Fprintf(&head, "%s\r\n", statusLine(resp))
		for _, h := range resp.Header {
			fmt.Fprintf(&head, "%s: %s\r\n", h.Name, h.Value)
		}
		head.WriteString("\r\n")
	}
	var body io.Reader = resp.Body
	if c.head {
		body = bytes.NewReader(nil)
	}
	cw := &countWriter{}
	st := c.write(out, io.MultiReader(&head, io.TeeReader(body, cw)))
	if st == 0 && ctx.Err() != nil {
		if c.maxTime > 0 {
			return c.failf(28, fmt.Sprintf("Operation timed out after %d milliseconds", time.Since(start).Milliseconds()))
		}
		return 130
	}
	c.writeOutFor(res, cw.n, st)
	return st
}

func retryWhy(err error, status int) string {
	if err != nil {
		return "timeout"
	}
	return fmt.Sprintf("HTTP error %d", status)
}

func (c *curlRun) client() commands.HTTPClient {
	if c.inv.Sys == nil {
		return nil
	}
	return c.inv.Sys.Net
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// write copies r to out in the sandbox ("" or "-": stdout).
func (c *curlRun) write(out string, r io.Reader) int {
	if out == "" || out == "-" {
		if _, err := io.Copy(c.inv.Stdout, r); err != nil {
			var ne *commands.NetError
			if errors.As(err, &ne) {
				return c.failf(ne.Code, ne.Msg)
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return c.failf(28, "Operation timed out")
			}
			return c.failf(23, "Failure writing output to destination")
		}
		return 0
	}
	if c.createDirs {
		c.inv.FS.MkdirAll(path.Dir(c.inv.Abs(out)), 0o755)
	}
	f, err := c.inv.OpenFile(out, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
	if err != nil {
		return c.failf(23, fmt.Sprintf("Failure writing output to destination, passed 0 returned -1: %s", commands.Describe(err)))
	}
	defer f.Close()
	if _, err := io.Copy(f, r); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return c.failf(28, "Operation timed out")
		}
		return c.failf(23, fmt.Sprintf("Failure writing output to destination: %s", commands.Describe(err)))
	}
	return 0
}

// writeOutFor prints -w's format for a finished transfer.
func (c *curlRun) writeOutFor(res result, size int64, exit int) {
	if c.writeOut == "" {
		return
	}
	code, ctype := "000", ""
	if res.resp != nil {
		code, ctype = fmt.Sprintf("%03d", res.resp.Status), res.resp.Get("Content-Type")
	}
	vars := map[string]string{
		"http_code": code, "response_code": code, "url_effective": res.url, "url": res.url,
		"size_download": strconv.FormatInt(size, 10), "content_type": ctype,
		"redirect_url": res.redirect, "num_redirects": strconv.Itoa(res.redirects),
		"exitcode": strconv.Itoa(exit), "method": c.rq.method,
	}
	var b strings.Builder
	f := c.writeOut
	for i := 0; i < len(f); i++ {
		switch {
		case f[i] == '%' && i+1 < len(f) && f[i+1] == '%':
			b.WriteByte('%')
			i++
		case f[i] == '%' && i+1 < len(f) && f[i+1] == '{':
			end := strings.IndexByte(f[i:], '}')
			if end < 0 {
				b.WriteString(f[i:])
				i = len(f)
				continue
			}
			name := f[i+2 : i+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else if strings.HasPrefix(name, "time_") {
				b.WriteString("0.000000")
			}
			i += end
		case f[i] == '\\' && i+1 < len(f):
			switch f[i+1] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(f[i+1])
			}
			i++
		default:
			b.WriteByte(f[i])
		}
	}
	io.WriteString(c.inv.Stdout, b.String())
}

// urlencode is --data-urlencode's "content", "=content", "name=content"
// and "name@file" forms.
func urlencode(ctx context.Context, inv *commands.Invocation, v string) string {
	if name, file, ok := strings.Cut(v, "@"); ok && !strings.Contains(name, "=") {
		data, _ := readData(ctx, inv, file)
		if name == "" {
			return url.QueryEscape(string(data))
		}
		return name + "=" + url.QueryEscape(string(data))
	}
	name, val, ok := strings.Cut(v, "=")
	if !ok {
		return url.QueryEscape(v)
	}
	if name == "" {
		return url.QueryEscape(val)
	}
	return name + "=" + url.QueryEscape(val)
}
