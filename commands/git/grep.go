package git

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/warren-sandbox/warren/commands/internal/posixre"
)

// grepOpts are git grep's options that warren honours.
type grepOpts struct {
	lineNum, icase, names, without, count, word, invert, noName, quiet, cached, noBinary bool
	mode                                                                                 byte // 'G', 'E', 'F'
	patterns                                                                             []string
}

// grepSource is one file to search: its name as printed and its content.
type grepSource struct {
	label string
	size  int64
	read  func() ([]byte, error)
}

func cmdGrep(s *session, args []string) error {
	o := grepOpts{mode: 'G'}
	var operands, paths []string
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if dashdash {
			paths = append(paths, a)
			continue
		}
		switch a {
		case "--":
			dashdash = true
		case "-n", "--line-number":
			o.lineNum = true
		case "-i", "--ignore-case":
			o.icase = true
		case "-l", "--files-with-matches", "--name-only":
			o.names = true
		case "-L", "--files-without-match":
			o.without = true
		case "-c", "--count":
			o.count = true
		case "-w", "--word-regexp":
			o.word = true
		case "-v", "--invert-match":
			o.invert = true
		case "-h":
			o.noName = true
		case "-H":
			o.noName = false
		case "-q", "--quiet":
			o.quiet = true
		case "-E", "--extended-regexp":
			o.mode = 'E'
		case "-F", "--fixed-strings":
			o.mode = 'F'
		case "-G", "--basic-regexp":
			o.mode = 'G'
		case "--cached":
			o.cached = true
		case "-I":
			o.noBinary = true
		case "--no-color", "--color=never":
		case "-e":
			if i+1 >= len(args) {
				return errorf(129, "error: switch `e' requires a value")
			}
			i++
			o.patterns = append(o.patterns, args[i])
		default:
			if strings.HasPrefix(a, "-e") && len(a) > 2 {
				o.patterns = append(o.patterns, a[2:])
				continue
			}
			if strings.HasPrefix(a, "-") {
				// -A/-B/-C context, -P, -o, --and, -p, -W, --untracked,
				// --no-index, -a, --max-depth...
				return unknownOpt(a)
			}
			operands = append(operands, a)
		}
	}
	if len(o.patterns) == 0 {
		if len(operands) == 0 {
			return fatalf("no pattern given")
		}
		o.patterns, operands = operands[:1], operands[1:]
	}
	if err := s.open(); err != nil {
		return err
	}
	var revs []string
	for i, a := range operands {
		if _, err := s.repo.ResolveRevision(plumbing.Revision(a)); err == nil && !strings.Contains(a, ":") {
			revs = append(revs, a)
			continue
		}
		if strings.Contains(a, ":") {
			return unsupported("REV:PATH")
		}
		// the first operand that is no revision starts the paths, each of
		// which must exist, as git checks
		for _, p := range operands[i:] {
			if _, err := s.inv.FS.Lstat(path.Join(s.dir, p)); err != nil {
				return fatalf("ambiguous argument '%s': unknown revision or path not in the working tree.\nUse '--' to separate paths from revisions, like this:\n'git <command> [<revision>...] -- [<file>...]'", p)
			}
		}
		paths = append(operands[i:len(operands):len(operands)], paths...)
		break
	}
	if o.cached && len(revs) > 0 {
		return fatalf("both --cached and trees are given")
	}
	m, err := grepMatcher(o)
	if err != nil {
		return err
	}
	match, err := s.grepPathspec(paths)
	if err != nil {
		return err
	}
	var sources []grepSource
	switch {
	case len(revs) > 0:
		for _, r := range revs {
			src, err := s.grepTree(r, match)
			if err != nil {
				return err
			}
			sources = append(sources, src...)
		}
	default:
		if sources, err = s.grepIndex(o.cached, match); err != nil {
			return err
		}
	}
	hit := false
	for _, src := range sources {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		found, err := s.grepOne(src, m, o)
		if err != nil {
			return err
		}
		if found {
			hit = true
			if o.quiet {
				break
			}
		}
	}
	if !hit {
		return &exitError{1, ""}
	}
	return nil
}

// grepMatcher compiles the patterns as one alternation.
func grepMatcher(o grepOpts) (*regexp.Regexp, error) {
	parts := make([]string, 0, len(o.patterns))
	for _, p := range o.patterns {
		switch o.mode {
		case 'F':
			parts = append(parts, regexp.QuoteMeta(p))
		default:
			g, err := posixre.Translate(p, o.mode == 'E')
			if errors.Is(err, posixre.ErrBackref) {
				return nil, unsupported("back-references")
			}
			if err != nil {
				return nil, fatalf("command line, '%s': %v", p, err)
			}
			parts = append(parts, g)
		}
	}
	expr := "(?:" + strings.Join(parts, ")|(?:") + ")"
	if o.icase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fatalf("command line, '%s': %v", strings.Join(o.patterns, "|"), err)
	}
	re.Longest()
	return re, nil
}

// grepPathspec returns the filter on worktree paths: the cwd's subtree
// without pathspecs (git grep searches below the cwd), else the pathspecs
// taken relative to the cwd.
func (s *session) grepPathspec(paths []string) (func(string) bool, error) {
	if len(paths) == 0 {
		prefix, err := s.rel(".")
		if err != nil {
			return nil, err
		}
		if prefix == "." {
			return func(string) bool { return true }, nil
		}
		return func(n string) bool { return strings.HasPrefix(n, prefix+"/") }, nil
	}
	return s.pathFilter(paths)
}

// grepLabel is how git grep names a worktree path: relative to the cwd.
func (s *session) grepLabel(name string) string {
	return relPath(s.dir, path.Join(s.root, name))
}

// grepIndex lists the regular files of the index, read from the worktree
// (or, cached, from their staged blobs). Untracked files are not searched.
func (s *session) grepIndex(cached bool, match func(string) bool) ([]grepSource, error) {
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return nil, err
	}
	var out []grepSource
	seen := map[string]bool{}
	for _, e := range idx.Entries {
		if seen[e.Name] || !e.Mode.IsRegular() || !match(e.Name) {
			continue
		}
		seen[e.Name] = true
		if cached {
			out = append(out, grepSource{label: s.grepLabel(e.Name), size: int64(e.Size), read: s.blobReader(e.Hash)})
			continue
		}
		abs := path.Join(s.root, e.Name)
		fi, err := s.inv.FS.Lstat(abs)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted or replaced in the worktree: git skips it
		}
		out = append(out, grepSource{label: s.grepLabel(e.Name), size: fi.Size(),
			read: func() ([]byte, error) { return s.inv.FS.ReadFile(abs) }})
	}
	return out, nil
}

// grepTree lists the regular files of rev's tree, named "rev:path".
func (s *session) grepTree(rev string, match func(string) bool) ([]grepSource, error) {
	c, err := s.commit(rev)
	if err != nil {
		return nil, err
	}
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	w := object.NewTreeWalker(t, true, nil)
	defer w.Close()
	var out []grepSource
	for {
		name, e, err := w.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if e.Mode != filemode.Regular && e.Mode != filemode.Executable && e.Mode != filemode.Deprecated || !match(name) {
			continue
		}
		size, err := s.repo.Storer.EncodedObjectSize(e.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, grepSource{label: rev + ":" + s.grepLabel(name), size: size, read: s.blobReader(e.Hash)})
	}
	return out, nil
}

// blobReader reads a blob whole, uncharged: the caller charges its size.
func (s *session) blobReader(h plumbing.Hash) func() ([]byte, error) {
	return func() ([]byte, error) {
		b, err := s.repo.BlobObject(h)
		if err != nil {
			return nil, err
		}
		r, err := b.Reader()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(r)
	}
}

// grepOne searches one file and prints what git prints for it; it reports
// whether the file counts as a hit (for -L: whether it was listed).
func (s *session) grepOne(src grepSource, re *regexp.Regexp, o grepOpts) (bool, error) {
	// the content is held whole while it is searched
	if err := s.res.Grow(src.size); err != nil {
		return false, err
	}
	defer s.res.Shrink(src.size)
	data, err := src.read()
	if err != nil {
		return false, fatalf("unable to read %s: %v", src.label, err)
	}
	before := s.out.Len()
	binary := isBinary(data)
	if binary && o.noBinary {
		return false, nil
	}
	n := 0
	lineNo := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		lineNo++
		if grepLineMatches(re, line, o.word) == o.invert {
			continue
		}
		n++
		if o.quiet || o.names || o.without {
			break
		}
		if o.count {
			continue
		}
		if binary {
			fmt.Fprintf(s.out, "Binary file %s matches\n", src.label)
			break
		}
		if !o.noName {
			s.out.WriteString(src.label)
			s.out.WriteByte(':')
		}
		if o.lineNum {
			s.out.WriteString(strconv.Itoa(lineNo))
			s.out.WriteByte(':')
		}
		s.out.Write(line)
		s.out.WriteByte('\n')
	}
	switch {
	case o.quiet:
	case o.without:
		if n == 0 {
			fmt.Fprintln(s.out, src.label)
		}
	case o.names && n > 0:
		fmt.Fprintln(s.out, src.label)
	case o.count && n > 0:
		if o.noName {
			fmt.Fprintf(s.out, "%d\n", n)
		} else {
			fmt.Fprintf(s.out, "%s:%d\n", src.label, n)
		}
	}
	// the output is kept until the command ends: charge it
	if err := s.res.Grow(int64(s.out.Len() - before)); err != nil {
		return false, err
	}
	if o.without {
		return n == 0, nil
	}
	return n > 0, nil
}

// grepLineMatches is re on line; with -w a match counts only between
// non-word characters, trying later starts as git does.
func grepLineMatches(re *regexp.Regexp, line []byte, word bool) bool {
	if !word {
		return re.Match(line)
	}
	for start := 0; start <= len(line); {
		loc := re.FindIndex(line[start:])
		if loc == nil {
			return false
		}
		b, e := start+loc[0], start+loc[1]
		if (b == 0 || !isWordByte(line[b-1])) && (e == len(line) || !isWordByte(line[e])) && e > b {
			return true
		}
		start = b + 1
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
