package git

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/git/smarthttp"
)

// isNetworkURL reports a remote reached over the network (smart HTTP, or
// a scheme the resident git refuses with a reason).
func isNetworkURL(u string) bool {
	return strings.Contains(u, "://") && !strings.HasPrefix(u, "file://") || strings.HasPrefix(u, "git@")
}

// dial opens the remote at raw over the sandbox's network. Only http(s)
// is spoken: everything goes through commands.HTTPClient, so the egress
// policy sees it (ssh and git:// would need a socket of their own).
func (s *session) dial(raw string) (*smarthttp.Remote, error) {
	scheme, _, _ := strings.Cut(raw, "://")
	if strings.HasPrefix(raw, "git@") {
		scheme = "ssh"
	}
	shown := raw
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = nil // git's messages never show credentials
		shown = u.String()
	}
	if scheme != "https" && scheme != "http" {
		return nil, fatalf("unable to access '%s': protocol '%s' is not supported here (the resident git speaks https:// and http:// through the sandbox's egress policy)", shown, scheme)
	}
	var net commands.HTTPClient
	if s.inv.Sys != nil {
		net = s.inv.Sys.Net
	}
	if net == nil {
		return nil, fatalf("unable to access '%s': network disabled for this sandbox", shown)
	}
	r, err := smarthttp.Open(net, raw, smarthttp.Options{Header: s.extraHeaders(raw), Budget: s.res})
	if err != nil {
		return nil, s.remoteErr(err)
	}
	r.Warn = func(m string) { fmt.Fprintln(s.inv.Stderr, m) }
	return r, nil
}

// remoteErr turns a transport failure into git's fatal line; memory limits
// pass through to the shell's status 125.
func (s *session) remoteErr(err error) error {
	var e *smarthttp.Error
	if errors.As(err, &e) {
		return fatalf("%s", e.Msg)
	}
	return err
}

// extraHeaders collects http.extraHeader and http.<url>.extraHeader for
// raw (every value, as git sends them all), from -c and the config files.
func (s *session) extraHeaders(raw string) []commands.HeaderField {
	var vals []string
	files := []string{"/etc/gitconfig"}
	if home := s.inv.Getenv("HOME"); home != "" {
		files = append(files, path.Join(home, ".config", "git", "config"), path.Join(home, ".gitconfig"))
	}
	if s.root != "" {
		files = append(files, path.Join(s.root, ".git", "config"))
	}
	for _, f := range files {
		cfg, err := s.loadConfigFile(f)
		if err != nil || !cfg.HasSection("http") {
			continue
		}
		sec := cfg.Section("http")
		vals = append(vals, sec.Options.GetAll("extraHeader")...)
		for _, sub := range sec.Subsections {
			if strings.HasPrefix(raw, strings.TrimSuffix(sub.Name, "/")) {
				vals = append(vals, sub.Options.GetAll("extraHeader")...)
			}
		}
	}
	for k, v := range s.extra {
		if k == "http.extraheader" || strings.HasPrefix(k, "http.") && strings.HasSuffix(k, ".extraheader") && strings.HasPrefix(raw, strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(k, "http."), ".extraheader"), "/")) {
			vals = append(vals, v)
		}
	}
	// An empty value clears the headers collected so far (git's rule).
	for i := len(vals) - 1; i >= 0; i-- {
		if strings.TrimSpace(vals[i]) == "" {
			vals = vals[i+1:]
			break
		}
	}
	var out []commands.HeaderField
	for _, v := range vals {
		if name, val, ok := strings.Cut(v, ":"); ok && strings.TrimSpace(name) != "" {
			out = append(out, commands.HeaderField{Name: strings.TrimSpace(name), Value: strings.TrimSpace(val)})
		}
	}
	return out
}

// remoteConfig returns the named remote, or a URL given in its place
// (with no remote-tracking refs).
func (s *session) remoteConfig(name string) (*config.RemoteConfig, error) {
	cfg, err := s.repo.Config()
	if err != nil {
		return nil, err
	}
	if rc, ok := cfg.Remotes[name]; ok && len(rc.URLs) > 0 {
		return rc, nil
	}
	if isNetworkURL(name) {
		return &config.RemoteConfig{URLs: []string{name}}, nil
	}
	return nil, fatalf("'%s' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.", name)
}

// defaultRemote is the current branch's remote, else origin.
func (s *session) defaultRemote() string {
	if b, ok := s.branchName(); ok {
		if cfg, err := s.repo.Config(); err == nil {
			if br, ok := cfg.Branches[b]; ok && br.Remote != "" {
				return br.Remote
			}
		}
	}
	return "origin"
}

// cmdRemote manages remotes: list (-v), add, remove, get-url, set-url.
func cmdRemote(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	cfg, err := s.repo.Config()
	if err != nil {
		return err
	}
	verbose := false
	if len(args) > 0 && (args[0] == "-v" || args[0] == "--verbose") {
		verbose, args = true, args[1:]
	}
	if len(args) == 0 {
		names := make([]string, 0, len(cfg.Remotes))
		for n := range cfg.Remotes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if !verbose {
				fmt.Fprintln(s.out, n)
				continue
			}
			for _, u := range cfg.Remotes[n].URLs {
				fmt.Fprintf(s.out, "%s\t%s (fetch)\n%s\t%s (push)\n", n, u, n, u)
			}
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	for _, a := range rest {
		if strings.HasPrefix(a, "-") {
			return unknownOpt(a)
		}
	}
	switch sub {
	case "add":
		if len(rest) != 2 {
			return errorf(129, "usage: git remote add [<options>] <name> <url>")
		}
		name := rest[0]
		if _, ok := cfg.Remotes[name]; ok {
			return errorf(3, "error: remote %s already exists.", name)
		}
		if !validBranchName(name) {
			return fatalf("'%s' is not a valid remote name", name)
		}
		cfg.Remotes[name] = &config.RemoteConfig{Name: name, URLs: []string{rest[1]},
			Fetch: []config.RefSpec{config.RefSpec(fmt.Sprintf("+refs/heads/*:refs/remotes/%s/*", name))}}
		return s.repo.SetConfig(cfg)
	case "remove", "rm":
		if len(rest) != 1 {
			return errorf(129, "usage: git remote remove <name>")
		}
		if _, ok := cfg.Remotes[rest[0]]; !ok {
			return errorf(2, "error: No such remote: '%s'", rest[0])
		}
		delete(cfg.Remotes, rest[0])
		for _, b := range cfg.Branches {
			if b.Remote == rest[0] {
				b.Remote, b.Merge = "", ""
			}
		}
		if err := s.repo.SetConfig(cfg); err != nil {
			return err
		}
		refs, _ := s.repo.References()
		var drop []plumbing.ReferenceName
		refs.ForEach(func(r *plumbing.Reference) error {
			if strings.HasPrefix(r.Name().String(), "refs/remotes/"+rest[0]+"/") {
				drop = append(drop, r.Name())
			}
			return nil
		})
		for _, n := range drop {
			s.repo.Storer.RemoveReference(n)
		}
		return nil
	case "get-url", "set-url":
		want := 1
		if sub == "set-url" {
			want = 2
		}
		if len(rest) != want {
			return errorf(129, "usage: git remote %s <name>%s", sub, map[bool]string{true: " <newurl>"}[sub == "set-url"])
		}
		rc, ok := cfg.Remotes[rest[0]]
		if !ok {
			return errorf(2, "error: No such remote '%s'", rest[0])
		}
		if sub == "get-url" {
			for _, u := range rc.URLs {
				fmt.Fprintln(s.out, u)
			}
			return nil
		}
		rc.URLs = []string{rest[1]}
		return s.repo.SetConfig(cfg)
	}
	return unsupported("remote " + sub)
}
