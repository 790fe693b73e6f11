// Package git is git over the sandbox vfs, built on go-git with a go-billy
// adapter (billy.go). It covers the everyday workflow (init, config, add,
// rm, mv, commit, status, log, diff, show, branch, checkout, switch,
// restore, reset, tag, merge, revert, stash, rev-parse, ls-files, grep,
// clean, blame, shortlog, apply, format-patch, am, diff --no-index, clone
// from a sandbox path; clone, fetch, pull, push, ls-remote and remote over
// https:// and http:// through the sandbox's egress client, package
// smarthttp) with git's output formats, checked against recordings of
// git 2.39. Merges fast-forward or merge line by line; conflicts get git's
// markers and the MERGE_HEAD workflow (add, commit, merge --abort), but
// git's index conflict stages are not kept (see unmergedFile). It never
// reads the host's config: the identity comes from the environment, -c, the
// repository's config, and the sandbox's ~/.gitconfig and /etc/gitconfig.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	formatcfg "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/sysinfo"
)

// Register adds git to t.
func Register(t commands.Table) { t.Register("git", gitCmd) }

// exitError carries a status and the message git prints for it.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func fatalf(format string, a ...any) error {
	return &exitError{128, "fatal: " + fmt.Sprintf(format, a...)}
}

func errorf(code int, format string, a ...any) error {
	return &exitError{code, fmt.Sprintf(format, a...)}
}

// refusal is what a subcommand cannot do (an option, a mode): gitCmd turns
// it into the commands contract's refusal ("git log --merges"), so the
// shell can run the image's real git instead. A subcommand returns it
// before it changes anything.
type refusal struct{ what string }

func (e *refusal) Error() string { return e.what + ": not supported here" }

func unknownOpt(a string) error { return &refusal{a} }

func isRefusal(err error) bool {
	var r *refusal
	return errors.As(err, &r)
}

func unsupported(what string) error { return &refusal{what} }

// gitCommands are real git's commands that the resident git lacks: they
// are refused with the "not supported here" line (or run by the image's
// git); any other name gets git's "is not a git command".
var gitCommands = map[string]bool{
	"archive": true, "bisect": true, "bundle": true,
	"cherry": true, "cherry-pick": true, "citool": true, "commit-tree": true,
	"count-objects": true, "credential": true, "diff-files": true, "diff-index": true,
	"diff-tree": true, "fast-export": true, "fast-import": true, "filter-branch": true, "for-each-ref": true, "fsck": true, "gc": true,
	"hash-object": true, "help": true, "init-db": true, "interpret-trailers": true,
	"ls-tree": true, "mailinfo": true, "mailsplit": true, "maintenance": true,
	"merge-base": true, "merge-file": true, "mktag": true, "mktree": true, "name-rev": true,
	"notes": true, "pack-objects": true, "prune": true, "range-diff": true, "read-tree": true, "rebase": true, "reflog": true, "repack": true, "replace": true, "request-pull": true, "rerere": true,
	"send-email": true, "show-branch": true, "show-ref": true,
	"sparse-checkout": true, "stripspace": true, "submodule": true, "symbolic-ref": true,
	"update-index": true, "update-ref": true, "var": true, "verify-commit": true,
	"verify-pack": true, "verify-tag": true, "whatchanged": true, "worktree": true,
	"write-tree": true, "check-ignore": true, "check-attr": true, "check-ref-format": true,
	"column": true, "gui": true, "instaweb": true, "unpack-objects": true, "bugreport": true,
}

// session is one git invocation.
type session struct {
	ctx   context.Context
	inv   *commands.Invocation
	dir   string // cwd (after -C)
	out   *bytes.Buffer
	repo  *gogit.Repository
	wt    *gogit.Worktree
	root  string // worktree root
	loc   *time.Location
	extra map[string]string // -c key=value
	quiet bool              // -q: no progress messages on stderr
	// res charges the blobs read whole (diffs) to the sandbox's budget.
	res    *commands.Reservation
	memErr error // a charge that failed: the command ends with 125
	// lastIndex is the index status() just read, for statusEntries
	lastIndex *index.Index
}

type subcommand func(s *session, args []string) error

var subcommands map[string]subcommand

func init() {
	subcommands = map[string]subcommand{
		"init": cmdInit, "config": cmdConfig, "add": cmdAdd, "rm": cmdRm, "mv": cmdMv,
		"commit": cmdCommit, "status": cmdStatus, "log": cmdLog, "diff": cmdDiff, "show": cmdShow,
		"branch": cmdBranch, "checkout": cmdCheckout, "switch": cmdSwitch, "restore": cmdRestore,
		"reset": cmdReset, "tag": cmdTag, "merge": cmdMerge, "rev-parse": cmdRevParse,
		"ls-files": cmdLsFiles, "clone": cmdClone, "version": cmdVersion, "rev-list": cmdRevList,
		"cat-file": cmdCatFile, "grep": cmdGrep, "blame": cmdBlame, "shortlog": cmdShortlog, "revert": cmdRevert, "clean": cmdClean, "stash": cmdStash, "describe": cmdDescribe,
		"apply": cmdApply, "am": cmdAm, "format-patch": cmdFormatPatch, "fetch": cmdFetch, "pull": cmdPull, "push": cmdPush, "ls-remote": cmdLsRemote, "remote": cmdRemote,
	}
}

func gitCmd(ctx context.Context, inv *commands.Invocation) int {
	s := &session{ctx: ctx, inv: inv, dir: inv.Dir, out: &bytes.Buffer{}, loc: sysinfo.Location(inv), extra: map[string]string{}}
	s.res = inv.Memory().Reserve()
	defer s.res.Close()
	args := inv.Args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "-C" && len(args) > 1:
			s.dir = path.Join(s.dir, args[1])
			if strings.HasPrefix(args[1], "/") {
				s.dir = path.Clean(args[1])
			}
			args = args[2:]
		case args[0] == "-c" && len(args) > 1:
			k, v, _ := strings.Cut(args[1], "=")
			s.extra[strings.ToLower(k)] = v
			args = args[2:]
		case args[0] == "--version":
			args = []string{"version"}
		case args[0] == "--no-pager" || args[0] == "--no-optional-locks" || args[0] == "-P":
			args = args[1:]
		default:
			// --git-dir, --work-tree, --bare, -p...: real git's
			return inv.Refuse(inv.Unsupported(args[0]))
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(inv.Stdout, "usage: git [-C <path>] [-c <name>=<value>] <command> [<args>]")
		return 1
	}
	fn, ok := subcommands[args[0]]
	if !ok {
		e := inv.Unsupported(args[0])
		if !gitCommands[args[0]] {
			e.Diag, e.Status = fmt.Sprintf("git: '%s' is not a git command. See 'git --help'.\n", args[0]), 1
		}
		return inv.Refuse(e)
	}
	err := fn(s, expandShort(args[1:], shortWithArg[args[0]]))
	var ref *refusal
	if errors.As(err, &ref) && s.memErr == nil {
		return inv.Refuse(inv.Unsupported(args[0] + " " + ref.what))
	}
	if s.memErr != nil {
		err = s.memErr // what was built without the blob is wrong: drop it
	} else {
		inv.Stdout.Write(s.out.Bytes())
	}
	if st, ok := inv.LimitExceeded(err); ok {
		return st
	}
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(inv.Stderr, ee.msg)
			}
			return ee.code
		}
		fmt.Fprintf(inv.Stderr, "fatal: %v\n", err)
		return 128
	}
	return 0
}

// shortWithArg lists, per subcommand, the short options that take a value.
var shortWithArg = map[string]string{
	"commit": "mFCc", "checkout": "bB", "switch": "cC", "tag": "mF", "log": "n", "merge": "m",
	"clone": "b", "init": "b", "restore": "s", "show": "n", "branch": "", "add": "", "rm": "",
	"reset": "", "status": "", "diff": "", "mv": "", "ls-files": "", "stash": "m",
	"grep": "e", "blame": "L", "shortlog": "", "revert": "", "clean": "e", "apply": "pC", "am": "p", "format-patch": "o", "fetch": "", "pull": "", "push": "", "ls-remote": "", "remote": "",
}

// expandShort splits bundled short options ("-qam msg" -> "-q -a -m msg"),
// leaving numbers (-5), attached values and everything after "--" alone.
func expandShort(args []string, withArg string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) <= 2 || a[0] != '-' || a[1] == '-' || (a[1] >= '0' && a[1] <= '9') || a[1] == 'U' {
			out = append(out, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if strings.IndexByte(withArg, c) >= 0 {
				out = append(out, "-"+string(c))
				if j+1 < len(a) {
					out = append(out, a[j+1:])
				}
				break
			}
			out = append(out, "-"+string(c))
		}
	}
	return out
}

// storage opens the object/ref store of the .git directory gitDir.
func (s *session) storage(gitDir string) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(newBilly(s.inv.FS, gitDir), cache.NewObjectLRUDefault(),
		filesystem.Options{})
}

// open finds the repository containing the cwd, as git does by walking up.
func (s *session) open() error {
	if s.repo != nil {
		return nil
	}
	for d := s.dir; ; d = path.Dir(d) {
		if fi, err := s.inv.FS.Stat(path.Join(d, ".git")); err == nil && fi.IsDir() {
			r, err := gogit.Open(s.storage(path.Join(d, ".git")), newBilly(s.inv.FS, d))
			if err != nil {
				return fatalf("not a git repository (or any of the parent directories): .git")
			}
			s.repo, s.root = r, d
			s.wt, err = r.Worktree()
			return err
		}
		if d == "/" {
			return fatalf("not a git repository (or any of the parent directories): .git")
		}
	}
}

// rel turns a user path (relative to the cwd) into a worktree path.
func (s *session) rel(p string) (string, error) {
	abs := path.Join(s.dir, p)
	if strings.HasPrefix(p, "/") {
		abs = path.Clean(p)
	}
	if abs == s.root {
		return ".", nil
	}
	if !strings.HasPrefix(abs, s.root+"/") && s.root != "/" {
		return "", fatalf("%s: '%s' is outside repository at '%s'", p, p, s.root)
	}
	return strings.TrimPrefix(strings.TrimPrefix(abs, s.root), "/"), nil
}

// display renders a worktree path relative to the cwd, as git status does.
func (s *session) display(p string) string {
	abs := path.Join(s.root, p)
	cwd := s.dir
	if cwd == s.root {
		return p
	}
	return relPath(cwd, abs)
}

func relPath(dir, target string) string {
	d := strings.Split(strings.Trim(dir, "/"), "/")
	t := strings.Split(strings.Trim(target, "/"), "/")
	if dir == "/" {
		d = nil
	}
	i := 0
	for i < len(d) && i < len(t) && d[i] == t[i] {
		i++
	}
	var parts []string
	for range d[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, t[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// ---- configuration and identity ----

// configValue looks key ("user.name") up in -c, the repository config, the
// sandbox's ~/.gitconfig, ~/.config/git/config and /etc/gitconfig.
func (s *session) configValue(key string) (string, bool) {
	if v, ok := s.extra[strings.ToLower(key)]; ok {
		return v, true
	}
	files := []string{}
	if s.root != "" {
		files = append(files, path.Join(s.root, ".git", "config"))
	}
	if home := s.inv.Getenv("HOME"); home != "" {
		files = append(files, path.Join(home, ".gitconfig"), path.Join(home, ".config", "git", "config"))
	}
	files = append(files, "/etc/gitconfig")
	for _, f := range files {
		if v, ok := s.readConfigValue(f, key); ok {
			return v, true
		}
	}
	return "", false
}

func splitKey(key string) (section, sub, name string) {
	parts := strings.Split(key, ".")
	if len(parts) < 2 {
		return key, "", ""
	}
	section, name = parts[0], parts[len(parts)-1]
	if len(parts) > 2 {
		sub = strings.Join(parts[1:len(parts)-1], ".")
	}
	return
}

func (s *session) loadConfigFile(file string) (*formatcfg.Config, error) {
	cfg := formatcfg.New()
	data, err := s.inv.FS.ReadFile(file)
	if err != nil {
		return cfg, err
	}
	if err := formatcfg.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return cfg, fatalf("bad config file %s: %v", file, err)
	}
	return cfg, nil
}

func (s *session) readConfigValue(file, key string) (string, bool) {
	cfg, err := s.loadConfigFile(file)
	if err != nil {
		return "", false
	}
	section, sub, name := splitKey(key)
	if !cfg.HasSection(section) {
		return "", false
	}
	sec := cfg.Section(section)
	opts := sec.Options
	if sub != "" {
		if !sec.HasSubsection(sub) {
			return "", false
		}
		opts = sec.Subsection(sub).Options
	}
	for i := len(opts) - 1; i >= 0; i-- {
		if strings.EqualFold(opts[i].Key, name) {
			return opts[i].Value, true
		}
	}
	return "", false
}

// signature builds the author or committer ("AUTHOR"/"COMMITTER").
func (s *session) signature(kind string) (*object.Signature, error) {
	name, hasName := s.inv.LookupEnv("GIT_" + kind + "_NAME")
	if !hasName {
		name, hasName = s.configValue("user.name")
	}
	email, hasEmail := s.inv.LookupEnv("GIT_" + kind + "_EMAIL")
	if !hasEmail {
		email, hasEmail = s.configValue("user.email")
	}
	if !hasEmail {
		email, hasEmail = s.inv.LookupEnv("EMAIL")
	}
	if !hasName || !hasEmail || name == "" {
		host := "sandbox"
		if s.inv.Sys != nil && s.inv.Sys.Hostname != "" {
			host = s.inv.Sys.Hostname
		}
		who := "Author"
		if kind == "COMMITTER" {
			who = "Committer"
		}
		return nil, &exitError{128, who + ` identity unknown

*** Please tell me who you are.

Run

  git config --global user.email "you@example.com"
  git config --global user.name "Your Name"

to set your account's default identity.
Omit --global to set the identity only in this repository.

fatal: unable to auto-detect email address (got 'root@` + host + `.(none)')`}
	}
	when := s.inv.Now().In(s.loc).Truncate(time.Second)
	if d, ok := s.inv.LookupEnv("GIT_" + kind + "_DATE"); ok && d != "" {
		t, err := s.parseDate(d)
		if err != nil {
			return nil, fatalf("invalid date format: %s", d)
		}
		when = t
	}
	return &object.Signature{Name: name, Email: email, When: when}, nil
}

// parseDate reads the date forms git accepts in GIT_*_DATE: "@UNIX +ZZZZ",
// "UNIX +ZZZZ", RFC 2822 and ISO 8601.
func (s *session) parseDate(d string) (time.Time, error) {
	d = strings.TrimSpace(d)
	f := strings.Fields(strings.TrimPrefix(d, "@"))
	if len(f) >= 1 && len(f) <= 2 {
		if sec, err := strconv.ParseInt(f[0], 10, 64); err == nil {
			loc := time.UTC
			if len(f) == 2 {
				l, ok := zone(f[1])
				if !ok {
					return time.Time{}, fmt.Errorf("bad zone")
				}
				loc = l
			}
			return time.Unix(sec, 0).In(loc), nil
		}
	}
	for _, l := range []string{time.RFC1123Z, "Mon, 2 Jan 2006 15:04:05 -0700", "2006-01-02T15:04:05-07:00",
		"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05 -0700", "2006-01-02T15:04:05-0700", "Mon Jan 2 15:04:05 2006 -0700"} {
		if t, err := time.Parse(l, d); err == nil {
			return t, nil
		}
	}
	return sysinfo.ParseDate(d, s.inv.Now(), s.loc)
}

func zone(z string) (*time.Location, bool) {
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') {
		return nil, false
	}
	h, err1 := strconv.Atoi(z[1:3])
	m, err2 := strconv.Atoi(z[3:5])
	if err1 != nil || err2 != nil {
		return nil, false
	}
	off := h*3600 + m*60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone("", off), true
}

// ---- shared helpers ----

func (s *session) head() (*plumbing.Reference, error) {
	return s.repo.Head()
}

// branchName is the current branch ("" when detached or unborn-unknown).
func (s *session) branchName() (string, bool) {
	ref, err := s.repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", false
	}
	if ref.Type() == plumbing.SymbolicReference {
		return ref.Target().Short(), true
	}
	return "", false
}

// resolve turns a revision into a commit hash with git's error.
func (s *session) resolve(rev string) (plumbing.Hash, error) {
	h, err := s.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return plumbing.ZeroHash, fatalf("ambiguous argument '%s': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'", rev)
	}
	return *h, nil
}

func (s *session) commit(rev string) (*object.Commit, error) {
	h, err := s.resolve(rev)
	if err != nil {
		return nil, err
	}
	c, err := s.repo.CommitObject(h)
	if err != nil {
		// an annotated tag: peel it
		if tag, terr := s.repo.TagObject(h); terr == nil {
			return tag.Commit()
		}
		return nil, fatalf("%s is not a commit", rev)
	}
	return c, nil
}

func short(h plumbing.Hash) string { return h.String()[:7] }

func firstLine(msg string) string {
	l, _, _ := strings.Cut(strings.TrimLeft(msg, "\n"), "\n")
	return l
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ---- init / version ----

func cmdVersion(s *session, args []string) error {
	fmt.Fprintln(s.out, "git version 2.39.5 (warren go-git)")
	return nil
}

func cmdInit(s *session, args []string) error {
	quiet, bare := false, false
	branch := ""
	var dirs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--bare":
			bare = true
		case (a == "-b" || a == "--initial-branch") && i+1 < len(args):
			i++
			branch = args[i]
		case strings.HasPrefix(a, "--initial-branch="):
			branch = strings.TrimPrefix(a, "--initial-branch=")
		case strings.HasPrefix(a, "-"):
			return unknownOpt(a)
		default:
			dirs = append(dirs, a)
		}
	}
	dir := s.dir
	if len(dirs) > 0 {
		dir = path.Join(s.dir, dirs[0])
		if strings.HasPrefix(dirs[0], "/") {
			dir = path.Clean(dirs[0])
		}
	}
	if err := s.inv.FS.MkdirAll(dir, 0o755); err != nil {
		return fatalf("cannot mkdir %s: %s", dir, commands.Strerror(err))
	}
	if branch == "" {
		if v, ok := s.configValue("init.defaultbranch"); ok {
			branch = v
		} else {
			branch = "master"
		}
	}
	gitDir := path.Join(dir, ".git")
	if bare {
		gitDir = dir
	}
	if _, err := s.inv.FS.Stat(path.Join(gitDir, "HEAD")); err == nil {
		if !quiet {
			fmt.Fprintf(s.out, "Reinitialized existing Git repository in %s/\n", gitDir)
		}
		return nil
	}
	st := s.storage(gitDir)
	var err error
	if bare {
		_, err = gogit.InitWithOptions(st, nil, gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)})
	} else {
		_, err = gogit.InitWithOptions(st, newBilly(s.inv.FS, dir), gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)})
	}
	if err != nil {
		return fatalf("cannot initialise repository: %v", err)
	}
	for _, d := range []string{"branches", "hooks", "info", "objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		s.inv.FS.MkdirAll(path.Join(gitDir, d), 0o755)
	}
	if _, err := s.inv.FS.Stat(path.Join(gitDir, "description")); err != nil {
		s.inv.FS.WriteFile(path.Join(gitDir, "description"), []byte("Unnamed repository; edit this file 'description' to name the repository.\n"), 0o644)
	}
	if !quiet {
		fmt.Fprintf(s.out, "Initialized empty Git repository in %s/\n", gitDir)
	}
	return nil
}

// ---- config ----

func cmdConfig(s *session, args []string) error {
	scope := ""
	action := ""
	var rest []string
	for _, a := range args {
		switch a {
		case "--global", "--system", "--local":
			scope = a[2:]
		case "--get", "--unset", "--list", "-l", "--get-all", "--unset-all", "--add":
			action = strings.TrimLeft(a, "-")
			if action == "l" {
				action = "list"
			}
		case "--bool", "--int", "--path", "--type=bool", "--type=int", "--show-origin", "--includes", "--no-includes":
		default:
			if strings.HasPrefix(a, "-") {
				return unknownOpt(a)
			}
			rest = append(rest, a)
		}
	}
	file := ""
	switch scope {
	case "global":
		home := s.inv.Getenv("HOME")
		if home == "" {
			return fatalf("$HOME not set")
		}
		file = path.Join(home, ".gitconfig")
	case "system":
		file = "/etc/gitconfig"
	default:
		if err := s.open(); err != nil {
			if action == "list" || (action == "" || action == "get") && len(rest) == 1 {
				// reading works outside a repository from the other scopes
				s.repo = nil
			} else {
				return fatalf("not in a git directory")
			}
		} else {
			file = path.Join(s.root, ".git", "config")
		}
	}
	if action == "list" {
		files := []string{file}
		if scope == "" {
			files = []string{"/etc/gitconfig"}
			if home := s.inv.Getenv("HOME"); home != "" {
				files = append(files, path.Join(home, ".gitconfig"))
			}
			if s.root != "" {
				files = append(files, path.Join(s.root, ".git", "config"))
			}
		}
		for _, f := range files {
			cfg, err := s.loadConfigFile(f)
			if err != nil {
				continue
			}
			for _, sec := range cfg.Sections {
				for _, o := range sec.Options {
					fmt.Fprintf(s.out, "%s.%s=%s\n", strings.ToLower(sec.Name), strings.ToLower(o.Key), o.Value)
				}
				for _, sub := range sec.Subsections {
					for _, o := range sub.Options {
						fmt.Fprintf(s.out, "%s.%s.%s=%s\n", strings.ToLower(sec.Name), sub.Name, strings.ToLower(o.Key), o.Value)
					}
				}
			}
		}
		return nil
	}
	if len(rest) == 0 {
		return errorf(129, "usage: git config [<options>]")
	}
	key := rest[0]
	if !strings.Contains(key, ".") {
		return errorf(1, "error: key does not contain a section: %s", key)
	}
	if action == "unset" || action == "unset-all" {
		cfg, _ := s.loadConfigFile(file)
		section, sub, name := splitKey(key)
		if sub != "" {
			cfg.Section(section).Subsection(sub).RemoveOption(name)
		} else {
			cfg.Section(section).RemoveOption(name)
		}
		return s.writeConfig(file, cfg)
	}
	if len(rest) == 1 || action == "get" || action == "get-all" {
		var v string
		var ok bool
		if scope != "" || file != "" && scope != "" {
			v, ok = s.readConfigValue(file, key)
		} else {
			v, ok = s.configValue(key)
		}
		if !ok {
			return &exitError{1, ""}
		}
		fmt.Fprintln(s.out, v)
		return nil
	}
	cfg, _ := s.loadConfigFile(file)
	section, sub, name := splitKey(key)
	if sub != "" {
		if action == "add" {
			cfg.Section(section).Subsection(sub).AddOption(name, rest[1])
		} else {
			cfg.Section(section).Subsection(sub).SetOption(name, rest[1])
		}
	} else {
		if action == "add" {
			cfg.Section(section).AddOption(name, rest[1])
		} else {
			cfg.Section(section).SetOption(name, rest[1])
		}
	}
	return s.writeConfig(file, cfg)
}

func (s *session) writeConfig(file string, cfg *formatcfg.Config) error {
	var buf bytes.Buffer
	if err := formatcfg.NewEncoder(&buf).Encode(cfg); err != nil {
		return fatalf("could not write config file %s: %v", file, err)
	}
	if err := s.inv.FS.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		return fatalf("could not write config file %s: %s", file, commands.Strerror(err))
	}
	// go-git caches the repository config; reopen on next use
	s.repo = nil
	return nil
}

// ---- add / rm / mv ----

func cmdCommit(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	var msgs []string
	all, allowEmpty, quiet, amend := false, false, false, false
	author := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-m" || a == "--message") && i+1 < len(args):
			i++
			msgs = append(msgs, args[i])
		case strings.HasPrefix(a, "--message="):
			msgs = append(msgs, strings.TrimPrefix(a, "--message="))
		case strings.HasPrefix(a, "-m") && len(a) > 2:
			msgs = append(msgs, a[2:])
		case a == "-a" || a == "--all":
			all = true
		case a == "-am" && i+1 < len(args):
			all = true
			i++
			msgs = append(msgs, args[i])
		case a == "--allow-empty":
			allowEmpty = true
		case a == "--allow-empty-message", a == "--no-verify", a == "-n", a == "--no-edit", a == "-s", a == "--signoff":
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "--amend":
			amend = true
		case (a == "-F" || a == "--file") && i+1 < len(args):
			i++
			rc, err := s.inv.Open(args[i])
			if err != nil {
				return fatalf("could not read log file '%s': %s", args[i], commands.Strerror(err))
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			msgs = append(msgs, strings.TrimRight(string(b), "\n"))
		case strings.HasPrefix(a, "--author="):
			author = strings.TrimPrefix(a, "--author=")
		case a == "--author" && i+1 < len(args):
			i++
			author = args[i]
		default:
			return unknownOpt(a)
		}
	}
	mergeHead, unmerged, merging := s.mergeState()
	_, revErr := s.inv.FS.Stat(s.root + "/.git/" + revertHead)
	reverting := revErr == nil
	if merging || reverting {
		if all {
			s.resolved(unmerged...)
			unmerged = nil
		}
		if len(unmerged) > 0 {
			for _, u := range unmerged {
				fmt.Fprintf(s.out, "U\t%s\n", u)
			}
			return errorf(128, "error: Committing is not possible because you have unmerged files.\nhint: Fix them up in the work tree, and then use 'git add/rm <file>'\nhint: as appropriate to mark resolution and make a commit.\nfatal: Exiting because of an unresolved conflict.")
		}
		if len(msgs) == 0 {
			// without an editor git keeps MERGE_MSG whole, "# Conflicts:"
			// lines included (whitespace cleanup only)
			data, _ := s.inv.FS.ReadFile(s.root + "/.git/MERGE_MSG")
			msgs = []string{strings.TrimRight(string(data), "\n")}
		}
	}
	if len(msgs) == 0 && !amend {
		return errorf(1, "Aborting commit due to empty commit message.\n(the sandbox has no editor: use git commit -m MESSAGE)")
	}
	msg := strings.Join(msgs, "\n\n")
	authorSig, err := s.signature("AUTHOR")
	if err != nil {
		return err
	}
	if author != "" {
		name, email, ok := strings.Cut(author, "<")
		if !ok {
			return fatalf("--author '%s' is not 'Name <email>' and matches no existing author", author)
		}
		authorSig.Name = strings.TrimSpace(name)
		authorSig.Email = strings.TrimSuffix(strings.TrimSpace(email), ">")
	}
	committer, err := s.signature("COMMITTER")
	if err != nil {
		return err
	}
	if amend && len(msgs) == 0 {
		h, err := s.head()
		if err != nil {
			return fatalf("You have nothing to amend.")
		}
		c, _ := s.repo.CommitObject(h.Hash())
		msg = strings.TrimRight(c.Message, "\n")
	}
	branch, _ := s.branchName()
	_, headErr := s.head()
	root := headErr != nil
	if !allowEmpty && !amend && !merging {
		// git refuses a commit that changes nothing, with a status summary
		if st, err := s.status(); err == nil {
			staged := false
			for _, fs := range st {
				if fs.Staging != gogit.Unmodified && fs.Staging != gogit.Untracked {
					staged = true
				}
				if all && (fs.Worktree == gogit.Modified || fs.Worktree == gogit.Deleted) {
					staged = true
				}
			}
			if !staged {
				s.longStatus(st, true)
				return &exitError{1, ""}
			}
		}
	}
	opts := &gogit.CommitOptions{All: all, AllowEmptyCommits: allowEmpty, Author: authorSig, Committer: committer, Amend: amend}
	if merging {
		head, err := s.head()
		if err != nil {
			return err
		}
		opts.Parents, opts.AllowEmptyCommits = []plumbing.Hash{head.Hash(), mergeHead}, true
	}
	h, err := s.wt.Commit(msg+"\n", opts)
	if err != nil {
		if errors.Is(err, gogit.ErrEmptyCommit) {
			return errorf(1, "nothing to commit, working tree clean")
		}
		return fatalf("%v", err)
	}
	if merging || reverting {
		s.clearMerge()
	}
	if quiet {
		return nil
	}
	c, err := s.repo.CommitObject(h)
	if err != nil {
		return err
	}
	if merging {
		fmt.Fprintf(s.out, "[%s %s] %s\n", branch, short(h), firstLine(msg))
		return nil
	}
	label := branch
	if label == "" {
		label = "detached HEAD"
	}
	if root {
		label += " (root-commit)"
	}
	fmt.Fprintf(s.out, "[%s %s] %s\n", label, short(h), firstLine(msg))
	if amend {
		fmt.Fprintf(s.out, " Date: %s\n", s.formatDate(c.Author.When, ""))
	}
	return s.commitSummary(c)
}

// commitSummary prints the " N files changed" and mode lines of a commit.
func (s *session) commitSummary(c *object.Commit) error {
	var parentTree *object.Tree
	if c.NumParents() > 0 {
		p, err := c.Parent(0)
		if err != nil {
			return err
		}
		parentTree, _ = p.Tree()
	}
	tree, err := c.Tree()
	if err != nil {
		return err
	}
	changes, err := s.treeChanges(parentTree, tree)
	if err != nil {
		return err
	}
	if changes, err = s.findRenames(changes); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	s.out.WriteString(summaryLine(changes))
	writeSummary(s.out, changes)
	return nil
}

func summaryLine(changes []*fileChange) string {
	ins, del := 0, 0
	for _, ch := range changes {
		a, d := ch.stat()
		ins += a
		del += d
	}
	return statSummary(len(changes), ins, del)
}

// statSummary is diffstat's last line (" 2 files changed, ...").
func statSummary(files, ins, del int) string {
	var b strings.Builder
	fmt.Fprintf(&b, " %s", plural(files, "file changed", "files changed"))
	if ins > 0 || del == 0 {
		fmt.Fprintf(&b, ", %s(+)", plural(ins, "insertion", "insertions"))
	}
	if del > 0 || ins == 0 {
		fmt.Fprintf(&b, ", %s(-)", plural(del, "deletion", "deletions"))
	}
	b.WriteString("\n")
	return b.String()
}

// ---- rev-parse / ls-files / cat-file / rev-list ----
