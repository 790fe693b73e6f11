package git

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// blameLine is who last changed one line of the blamed file.
type blameLine struct {
	commit   *object.Commit // nil: not committed yet (the worktree)
	boundary bool           // a root commit, printed with '^'
	path     string         // the file's name in that commit
	text     string
}

func cmdBlame(s *session, args []string) error {
	var operands []string
	rangeSpec := ""
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case dashdash:
			operands = append(operands, a)
		case a == "--":
			dashdash = true
		case a == "-L" && i+1 < len(args):
			i++
			rangeSpec = args[i]
		case strings.HasPrefix(a, "-L") && len(a) > 2:
			rangeSpec = a[2:]
		case strings.HasPrefix(a, "-"):
			// --porcelain, -p, -s, -e, -w, -M, -C, -c, -t, --root...
			return unknownOpt(a)
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) == 0 || len(operands) > 2 {
		return errorf(129, "usage: git blame [<options>] [<rev-opts>] [<rev>] [--] <file>")
	}
	if err := s.open(); err != nil {
		return err
	}
	rev, file := "", operands[len(operands)-1]
	if len(operands) == 2 {
		rev = operands[0]
	}
	name, err := s.rel(file)
	if err != nil {
		return err
	}
	lines, err := s.blame(rev, name, file)
	if err != nil {
		return err
	}
	first, last := 1, len(lines)
	if rangeSpec != "" {
		if first, last, err = blameRange(rangeSpec, len(lines), name); err != nil {
			return err
		}
	}
	shown := lines[first-1 : last]
	nameW, pathW, showPath := 0, 0, false
	for _, l := range shown {
		nameW = max(nameW, utf8.RuneCountInString(l.author()))
		pathW = max(pathW, len(l.path))
		if l.path != name {
			showPath = true
		}
	}
	numW := len(strconv.Itoa(last))
	for i, l := range shown {
		id := "00000000"
		switch {
		case l.commit == nil:
		case l.boundary:
			id = "^" + l.commit.Hash.String()[:7]
		default:
			id = l.commit.Hash.String()[:8]
		}
		s.out.WriteString(id + " ")
		if showPath {
			fmt.Fprintf(s.out, "%-*s ", pathW, l.path)
		}
		author := l.author()
		pad := strings.Repeat(" ", nameW-utf8.RuneCountInString(author))
		fmt.Fprintf(s.out, "(%s%s %s %*d) %s\n", author, pad, l.date(s).Format("2006-01-02 15:04:05 -0700"), numW, first+i,
			strings.TrimSuffix(l.text, "\n"))
	}
	return nil
}

func (l *blameLine) author() string {
	if l.commit == nil {
		return "Not Committed Yet"
	}
	return l.commit.Author.Name
}

func (l *blameLine) date(s *session) time.Time {
	if l.commit == nil {
		return s.inv.Now().In(s.loc).Truncate(time.Second)
	}
	return l.commit.Author.When
}

// blameRange reads -L: "a,b", "a", "a,+n" (1-based, inclusive).
func blameRange(spec string, n int, name string) (int, int, error) {
	a, b, hasEnd := strings.Cut(spec, ",")
	first, err := strconv.Atoi(a)
	if err != nil || first < 1 {
		return 0, 0, unsupported("-L " + spec)
	}
	last := n
	if hasEnd && b != "" {
		if strings.HasPrefix(b, "+") {
			k, err := strconv.Atoi(b[1:])
			if err != nil || k < 1 {
				return 0, 0, unsupported("-L " + spec)
			}
			last = first + k - 1
		} else if last, err = strconv.Atoi(b); err != nil || last < 1 {
			return 0, 0, unsupported("-L " + spec)
		}
	}
	if last < first {
		first, last = last, first
	}
	if first > n {
		return 0, 0, fatalf("file %s has only %d lines", name, n)
	}
	return first, min(last, n), nil
}

// blame attributes each line of name (at rev, or in the worktree) to the
// commit that last changed it, walking back through the history: a line
// the parent has unchanged passes to the parent. A merge passes the file
// to the parent that has it unchanged; one that changed it against every
// parent is refused (git splits the blame between them).
func (s *session) blame(rev, name, file string) ([]blameLine, error) {
	startRev := rev
	if startRev == "" {
		startRev = "HEAD"
	}
	c, err := s.commit(startRev)
	if err != nil {
		return nil, err
	}
	blob, err := s.fileAt(c, name)
	if err != nil {
		return nil, err
	}
	if blob == nil {
		return nil, fatalf("no such path '%s' in %s", file, startRev)
	}
	content, err := s.chargedRead(blob.Hash, blob.Size)
	if err != nil {
		return nil, err
	}
	var out []blameLine
	// idx[k] is the output line of line k of the version being examined
	var idx []int
	if rev == "" {
		// the worktree's lines that HEAD lacks are not committed yet
		data, err := s.inv.FS.ReadFile(s.root + "/" + name)
		if err != nil {
			return nil, fatalf("Cannot lstat '%s': No such file or directory", file)
		}
		if err := s.res.Grow(int64(len(data))); err != nil {
			return nil, err
		}
		defer s.res.Shrink(int64(len(data)))
		for _, l := range splitLines(string(data)) {
			out = append(out, blameLine{path: name, text: l})
		}
		idx = passLines(content, data, out, nil, func(int) {})
	} else {
		for k, l := range splitLines(string(content)) {
			out = append(out, blameLine{text: l})
			idx = append(idx, k)
		}
	}
	path := name
	for live(idx) {
		if err := s.ctx.Err(); err != nil {
			return nil, err
		}
		parent, ppath, pdata, err := s.blameParent(c, path, blob.Hash.String())
		if err != nil {
			s.res.Shrink(int64(len(content)))
			return nil, err
		}
		if parent == nil {
			for _, o := range idx {
				if o < 0 {
					continue
				}
				out[o].commit, out[o].boundary, out[o].path = c, c.NumParents() == 0, path
			}
			break
		}
		cc := c
		cpath := path
		idx = passLines(pdata.data, content, out, idx, func(o int) {
			out[o].commit, out[o].path = cc, cpath
		})
		s.res.Shrink(int64(len(content)))
		c, path, content, blob = parent, ppath, pdata.data, pdata.blob
	}
	s.res.Shrink(int64(len(content)))
	return out, nil
}

// blameData is a parent's version of the file.
type blameData struct {
	blob *object.Blob
	data []byte
}

// blameParent finds where c's version of path came from: the parent (and
// the file's name there, following a rename) and its content, charged;
// nil when c introduced the file or has no parent.
func (s *session) blameParent(c *object.Commit, path, hash string) (*object.Commit, string, *blameData, error) {
	if c.NumParents() == 0 {
		return nil, "", nil, nil
	}
	var parents []*object.Commit
	if err := c.Parents().ForEach(func(p *object.Commit) error { parents = append(parents, p); return nil }); err != nil {
		return nil, "", nil, err
	}
	for _, p := range parents {
		if b, err := s.fileAt(p, path); err == nil && b != nil && b.Hash.String() == hash {
			data, err := s.chargedRead(b.Hash, b.Size)
			return p, path, &blameData{b, data}, err
		}
	}
	if len(parents) > 1 {
		return nil, "", nil, unsupported("through a merge that changed the file against each parent")
	}
	p := parents[0]
	ppath := path
	b, err := s.fileAt(p, path)
	if err != nil {
		return nil, "", nil, err
	}
	if b == nil {
		// a rename into path, found as git diff finds it
		pt, err := p.Tree()
		if err != nil {
			return nil, "", nil, err
		}
		ct, err := c.Tree()
		if err != nil {
			return nil, "", nil, err
		}
		changes, err := s.treeChanges(pt, ct)
		if err != nil {
			return nil, "", nil, err
		}
		if changes, err = s.findRenames(changes); err != nil {
			return nil, "", nil, err
		}
		for _, ch := range changes {
			if ch.score > 0 && ch.to.name == path {
				ppath = ch.from.name
			}
		}
		if ppath == path {
			return nil, "", nil, nil
		}
		if b, err = s.fileAt(p, ppath); err != nil || b == nil {
			return nil, "", nil, err
		}
	}
	data, err := s.chargedRead(b.Hash, b.Size)
	return p, ppath, &blameData{b, data}, err
}

// fileAt is path's blob in c (nil when c has no such file).
func (s *session) fileAt(c *object.Commit, path string) (*object.Blob, error) {
	t, err := c.Tree()
	if err != nil {
		return nil, err
	}
	e, err := t.FindEntry(path)
	if err != nil || !e.Mode.IsFile() {
		return nil, nil
	}
	return s.repo.BlobObject(e.Hash)
}

// chargedRead reads a blob whole, charged to the budget (the caller
// shrinks it when done).
func (s *session) chargedRead(h plumbing.Hash, size int64) ([]byte, error) {
	if err := s.res.Grow(size); err != nil {
		return nil, err
	}
	b, err := s.blobReader(h)()
	if err != nil {
		s.res.Shrink(size)
		return nil, err
	}
	return b, nil
}

// passLines diffs the older version old against the newer cur, whose line
// k is output line idx[k] (idx nil: line k is output line k). A line of
// cur that old has unchanged passes on: the returned slice maps old's
// lines to output lines (-1: none). Lines only in cur get mark.
func passLines(old, cur []byte, out []blameLine, idx []int, mark func(int)) []int {
	at := func(k int) int {
		if idx == nil {
			return k
		}
		return idx[k]
	}
	var next []int
	ci := 0
	for _, d := range diff.Do(string(old), string(cur)) {
		n := len(splitLines(d.Text))
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for k := 0; k < n; k++ {
				next = append(next, at(ci))
				ci++
			}
		case diffmatchpatch.DiffDelete:
			for k := 0; k < n; k++ {
				next = append(next, -1)
			}
		case diffmatchpatch.DiffInsert:
			for k := 0; k < n; k++ {
				if o := at(ci); o >= 0 {
					mark(o)
				}
				ci++
			}
		}
	}
	return next
}

// live reports whether any line still waits for its commit.
func live(idx []int) bool {
	for _, o := range idx {
		if o >= 0 {
			return true
		}
	}
	return false
}
