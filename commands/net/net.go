// Package net holds curl and wget. The sandbox has no network until the
// egress-policy work lands, so both fail the way the real tools fail
// without one (curl status 6/7, wget status 4), saying why. curl still
// reads file:// URLs from the sandbox filesystem.
package net

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/sysinfo"
	"github.com/warren-sandbox/warren/vfs"
)

// Register adds curl and wget to t.
func Register(t commands.Table) {
	t.Register("curl", curl)
	t.Register("wget", wget)
}

const disabled = "network disabled for this sandbox"

// curlArgOpts are curl options that take a value.
var curlArgOpts = map[string]bool{
	"-o": true, "--output": true, "-H": true, "--header": true, "-d": true, "--data": true,
	"--data-raw": true, "--data-binary": true, "--data-urlencode": true, "-X": true, "--request": true,
	"-u": true, "--user": true, "-A": true, "--user-agent": true, "-e": true, "--referer": true,
	"-b": true, "--cookie": true, "-c": true, "--cookie-jar": true, "-F": true, "--form": true,
	"-T": true, "--upload-file": true, "-w": true, "--write-out": true, "-m": true, "--max-time": true,
	"--connect-timeout": true, "--retry": true, "--retry-delay": true, "--retry-max-time": true,
	"-x": true, "--proxy": true, "--cacert": true, "--cert": true, "--key": true, "-r": true,
	"--range": true, "-K": true, "--config": true, "--resolve": true, "--max-redirs": true,
	"-C": true, "--continue-at": true, "--limit-rate": true, "--url": true, "-Y": true, "-y": true,
	"--json": true, "--dump-header": true, "-D": true, "--output-dir": true, "--oauth2-bearer": true,
}

func curl(ctx context.Context, inv *commands.Invocation) int {
	var urls []string
	silent, showErr, remoteName := false, false, false
	output := ""
	args := inv.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--version" || a == "-V":
			fmt.Fprintln(inv.Stdout, "curl 8.5.0 (x86_64-pc-linux-gnu) warren-sandbox\nProtocols: file http https\nFeatures: none (network disabled for this sandbox)")
			return 0
		case a == "--help" || a == "-h":
			fmt.Fprintln(inv.Stdout, "Usage: curl [options...] <url>\nThe sandbox has no network; only file:// URLs work.")
			return 0
		case a == "--url" && i+1 < len(args):
			i++
			urls = append(urls, args[i])
		case a == "-o" || a == "--output":
			if i+1 < len(args) {
				i++
				output = args[i]
			}
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--") && len(a) > 2:
			output = a[2:]
		case curlArgOpts[a]:
			i++
		case strings.HasPrefix(a, "--"):
			if a == "--silent" {
				silent = true
			}
			if a == "--show-error" {
				showErr = true
			}
			if a == "--remote-name" {
				remoteName = true
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for k, c := range a[1:] {
				switch c {
				case 's':
					silent = true
				case 'S':
					showErr = true
				case 'O':
					remoteName = true
				}
				if curlArgOpts["-"+string(c)] {
					if k == len(a)-2 {
						if c == 'o' && i+1 < len(args) {
							output = args[i+1]
						}
						i++
					}
					break
				}
			}
		default:
			urls = append(urls, a)
		}
	}
	if len(urls) == 0 {
		fmt.Fprintln(inv.Stderr, "curl: no URL specified!")
		fmt.Fprintln(inv.Stderr, "curl: try 'curl --help' or 'curl --manual' for more information")
		return 2
	}
	fail := func(code int, msg string) int {
		if !silent || showErr {
			fmt.Fprintf(inv.Stderr, "curl: (%d) %s\n", code, msg)
		}
		return code
	}
	status := 0
	for _, raw := range urls {
		if ctx.Err() != nil {
			return 130
		}
		u, err := url.Parse(raw)
		if err != nil || raw == "" {
			status = fail(3, "URL using bad/illegal format or missing URL")
			continue
		}
		if u.Scheme == "" {
			u, _ = url.Parse("http://" + raw)
		}
		switch strings.ToLower(u.Scheme) {
		case "file":
			data, err := inv.FS.ReadFile(u.Path)
			if err != nil {
				status = fail(37, fmt.Sprintf("Couldn't open file %s", u.Path))
				continue
			}
			var w io.Writer = inv.Stdout
			name := output
			if remoteName && name == "" {
				name = u.Path[strings.LastIndex(u.Path, "/")+1:]
			}
			if name != "" {
				f, err := inv.OpenFile(name, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
				if err != nil {
					status = fail(23, fmt.Sprintf("Failure writing output to destination: %s", commands.Describe(err)))
					continue
				}
				w = f
				defer f.Close()
			}
			w.Write(data)
		case "http", "https", "ftp", "ftps", "scp", "sftp", "ws", "wss":
			host := u.Hostname()
			if host == "" {
				status = fail(3, "URL using bad/illegal format or missing URL")
				continue
			}
			if isIP(host) || host == "localhost" {
				port := u.Port()
				if port == "" {
					port = map[string]string{"https": "443", "ftp": "21"}[u.Scheme]
					if port == "" {
						port = "80"
					}
				}
				status = fail(7, fmt.Sprintf("Failed to connect to %s port %s after 0 ms: Couldn't connect to server (%s)", host, port, disabled))
				continue
			}
			status = fail(6, fmt.Sprintf("Could not resolve host: %s (%s)", host, disabled))
		default:
			status = fail(1, fmt.Sprintf("Protocol \"%s\" not supported", u.Scheme))
		}
	}
	return status
}

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

var wgetArgOpts = map[string]bool{
	"-O": true, "--output-document": true, "-o": true, "--output-file": true, "-P": true,
	"--directory-prefix": true, "-U": true, "--user-agent": true, "--header": true, "-t": true,
	"--tries": true, "-T": true, "--timeout": true, "--post-data": true, "--method": true,
	"--body-data": true, "-i": true, "--input-file": true, "-e": true, "--execute": true,
	"-l": true, "--level": true, "--user": true, "--password": true, "-w": true, "--wait": true,
}

func wget(ctx context.Context, inv *commands.Invocation) int {
	var urls []string
	quiet := false
	args := inv.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--version" || a == "-V":
			fmt.Fprintln(inv.Stdout, "GNU Wget 1.21.3 (warren sandbox: network disabled)")
			return 0
		case a == "-q" || a == "--quiet" || a == "-nv" || a == "--no-verbose":
			quiet = a == "-q" || a == "--quiet"
		case wgetArgOpts[a]:
			i++
		case strings.HasPrefix(a, "-"):
			if !strings.HasPrefix(a, "--") && strings.Contains(a, "q") {
				quiet = true
			}
		default:
			urls = append(urls, a)
		}
	}
	if len(urls) == 0 {
		fmt.Fprintln(inv.Stderr, "wget: missing URL")
		fmt.Fprintln(inv.Stderr, "Usage: wget [OPTION]... [URL]...")
		fmt.Fprintln(inv.Stderr, "")
		fmt.Fprintln(inv.Stderr, "Try `wget --help' for more options.")
		return 1
	}
	now := sysinfo.Strftime("%Y-%m-%d %H:%M:%S", inv.Now().In(sysinfo.Location(inv)))
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err == nil && u.Scheme == "" {
			u, err = url.Parse("http://" + raw)
		}
		if err != nil || u.Hostname() == "" {
			fmt.Fprintf(inv.Stderr, "%s: Invalid URL %s: Invalid host name.\n", raw, raw)
			continue
		}
		host := u.Hostname()
		if !quiet {
			fmt.Fprintf(inv.Stderr, "--%s--  %s\n", now, u.String())
			if isIP(host) {
				fmt.Fprintf(inv.Stderr, "Connecting to %s:%s... failed: %s.\n", host, portOf(u), disabled)
			} else {
				fmt.Fprintf(inv.Stderr, "Resolving %s (%s)... failed: %s.\n", host, host, disabled)
			}
		}
		if !isIP(host) {
			fmt.Fprintf(inv.Stderr, "wget: unable to resolve host address '%s'\n", host)
		}
	}
	return 4
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
