package git

import (
	"fmt"
	iofs "io/fs"
	"path"
	"sort"
	"strings"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

func cmdStatus(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	shortFmt, porcelain, branch := false, false, false
	var paths []string
	for _, a := range args {
		switch a {
		case "-s", "--short":
			shortFmt = true
		case "--porcelain", "--porcelain=v1":
			porcelain = true
		case "-b", "--branch":
			branch = true
		case "--long", "-uall", "-unormal", "--untracked-files=all", "--untracked-files=normal", "--no-renames", "--ignore-submodules":
		case "--":
		default:
			if strings.HasPrefix(a, "-") {
				return unknownOpt(a)
			}
			paths = append(paths, a)
		}
	}
	st, err := s.status()
	if err != nil {
		return fatalf("%v", err)
	}
	if len(paths) > 0 {
		filter, err := s.pathFilter(paths)
		if err != nil {
			return err
		}
		for n := range st {
			if !filter(n) {
				delete(st, n)
			}
		}
	}
	if shortFmt || porcelain {
		if branch {
			b, ok := s.branchName()
			switch {
			case !ok:
				s.out.WriteString("## HEAD (no branch)\n")
			default:
				if _, err := s.head(); err != nil {
					fmt.Fprintf(s.out, "## No commits yet on %s\n", b)
				} else {
					fmt.Fprintf(s.out, "## %s%s\n", b, s.trackingShort(b))
				}
			}
		}
		_, unmerged, _ := s.mergeState()
		isUnmerged := map[string]bool{}
		for _, u := range unmerged {
			isUnmerged[u] = true
		}
		for _, e := range s.statusEntries(st) {
			if isUnmerged[e.name] {
				e.x, e.y = 'U', 'U'
			}
			name := e.name
			if !porcelain {
				name = s.display(e.name)
				if e.dir {
					name += "/"
				}
			} else if e.dir {
				name += "/"
			}
			if e.from != "" {
				from := e.from
				if !porcelain {
					from = s.display(from)
				}
				name = from + " -> " + name
			}
			fmt.Fprintf(s.out, "%c%c %s\n", e.x, e.y, name)
		}
		return nil
	}
	s.longStatus(st, false)
	return nil
}

type statusEntry struct {
	name string
	from string // the source of a staged rename
	x, y byte
	dir  bool // an untracked directory shown as "dir/"
}

// statusEntries sorts go-git's status the way git prints it, collapsing
// untracked directories that hold no tracked file into "dir/".
func (s *session) statusEntries(st gogit.Status) []statusEntry {
	tracked := map[string]bool{}
	// the index decoded by the status() that produced st, if any
	idx, idxErr := s.lastIndex, error(nil)
	s.lastIndex = nil
	if idx == nil {
		idx, idxErr = s.repo.Storer.Index()
	}
	if idxErr == nil {
		for _, e := range idx.Entries {
			for d := path.Dir(e.Name); d != "."; d = path.Dir(d) {
				tracked[d] = true
			}
		}
	}
	var out []statusEntry
	seenDir := map[string]bool{}
	for name, fs := range st {
		x, y := byte(fs.Staging), byte(fs.Worktree)
		if x == ' ' && y == ' ' {
			continue
		}
		if fs.Worktree == gogit.Untracked {
			top := ""
			for d := path.Dir(name); d != "."; d = path.Dir(d) {
				if !tracked[d] {
					top = d
				}
			}
			if top != "" {
				if !seenDir[top] {
					seenDir[top] = true
					out = append(out, statusEntry{name: top, x: '?', y: '?', dir: true})
				}
				continue
			}
			out = append(out, statusEntry{name: name, x: '?', y: '?'})
			continue
		}
		out = append(out, statusEntry{name: name, x: x, y: y})
	}
	if idxErr == nil {
		out = s.detectRenames(out, idx)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		au, bu := a.x == '?', b.x == '?'
		if au != bu {
			return bu
		}
		return a.name < b.name
	})
	return out
}

var statusLabel = map[byte]string{
	'A': "new file:   ", 'M': "modified:   ", 'D': "deleted:    ", 'R': "renamed:    ",
	'C': "copied:     ", 'T': "typechange: ", 'U': "both modified:   ",
}

// longStatus prints git status's long form; forCommit is git commit's
// refusal, which prints the same report.
func (s *session) longStatus(st gogit.Status, forCommit bool) {
	w := s.out
	b, onBranch := s.branchName()
	_, headErr := s.head()
	unborn := headErr != nil
	if onBranch {
		fmt.Fprintf(w, "On branch %s\n", b)
	} else if h, err := s.head(); err == nil {
		fmt.Fprintf(w, "HEAD detached at %s\n", short(h.Hash()))
	}
	if onBranch && !unborn {
		if t := s.trackingLong(b); t != "" {
			fmt.Fprintf(w, "%s\n", t)
		}
	}
	if unborn {
		w.WriteString("\nNo commits yet\n\n")
	}
	_, unmergedPaths, merging := s.mergeState()
	isUnmerged := map[string]bool{}
	for _, u := range unmergedPaths {
		isUnmerged[u] = true
	}
	if merging {
		if len(unmergedPaths) > 0 {
			w.WriteString("You have unmerged paths.\n  (fix conflicts and run \"git commit\")\n  (use \"git merge --abort\" to abort the merge)\n\n")
		} else {
			w.WriteString("All conflicts fixed but you are still merging.\n  (use \"git commit\" to conclude merge)\n\n")
		}
	}
	if data, err := s.inv.FS.ReadFile(s.root + "/.git/" + revertHead); err == nil && len(data) >= 7 {
		fmt.Fprintf(w, "You are currently reverting commit %s.\n", data[:7])
		if len(unmergedPaths) > 0 {
			w.WriteString("  (fix conflicts and run \"git revert --continue\")\n")
		} else {
			w.WriteString("  (all conflicts fixed: run \"git revert --continue\")\n")
		}
		w.WriteString("  (use \"git revert --skip\" to skip this patch)\n  (use \"git revert --abort\" to cancel the revert operation)\n\n")
	}
	entries := s.statusEntries(st)
	var staged, unstaged, untracked, unmerged []statusEntry
	anyDeleted := false
	for _, e := range entries {
		if e.x == '?' {
			untracked = append(untracked, e)
			continue
		}
		if isUnmerged[e.name] {
			unmerged = append(unmerged, e)
			continue
		}
		if e.x != ' ' {
			staged = append(staged, e)
		}
		if e.y != ' ' {
			unstaged = append(unstaged, e)
			if e.y == 'D' {
				anyDeleted = true
			}
		}
	}
	if len(staged) > 0 {
		w.WriteString("Changes to be committed:\n")
		if merging {
		} else if unborn {
			w.WriteString("  (use \"git rm --cached <file>...\" to unstage)\n")
		} else {
			w.WriteString("  (use \"git restore --staged <file>...\" to unstage)\n")
		}
		for _, e := range staged {
			name := s.display(e.name)
			if e.from != "" {
				name = s.display(e.from) + " -> " + name
			}
			fmt.Fprintf(w, "\t%s%s\n", statusLabel[e.x], name)
		}
		w.WriteString("\n")
	}
	if len(unmerged) > 0 {
		w.WriteString("Unmerged paths:\n")
		if _, err := s.inv.FS.Stat(s.root + "/.git/" + revertHead); err == nil {
			w.WriteString("  (use \"git restore --staged <file>...\" to unstage)\n")
		}
		w.WriteString("  (use \"git add <file>...\" to mark resolution)\n")
		for _, e := range unmerged {
			fmt.Fprintf(w, "\tboth modified:   %s\n", s.display(e.name))
		}
		w.WriteString("\n")
	}
	if len(unstaged) > 0 {
		w.WriteString("Changes not staged for commit:\n")
		if anyDeleted {
			w.WriteString("  (use \"git add/rm <file>...\" to update what will be committed)\n")
		} else {
			w.WriteString("  (use \"git add <file>...\" to update what will be committed)\n")
		}
		w.WriteString("  (use \"git restore <file>...\" to discard changes in working directory)\n")
		for _, e := range unstaged {
			fmt.Fprintf(w, "\t%s%s\n", statusLabel[e.y], s.display(e.name))
		}
		w.WriteString("\n")
	}
	if len(untracked) > 0 {
		w.WriteString("Untracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n")
		for _, e := range untracked {
			n := s.display(e.name)
			if e.dir {
				n += "/"
			}
			fmt.Fprintf(w, "\t%s\n", n)
		}
		w.WriteString("\n")
	}
	switch {
	case len(staged) > 0:
	case len(unstaged) > 0 || len(unmerged) > 0:
		w.WriteString("no changes added to commit (use \"git add\" and/or \"git commit -a\")\n")
	case len(untracked) > 0:
		w.WriteString("nothing added to commit but untracked files present (use \"git add\" to track)\n")
	case unborn:
		w.WriteString("nothing to commit (create/copy files and use \"git add\" to track)\n")
	default:
		w.WriteString("nothing to commit, working tree clean\n")
	}
}

// upstream is the remote-tracking branch configured for b, if any.
func (s *session) upstream(b string) string {
	cfg, err := s.repo.Config()
	if err != nil {
		return ""
	}
	br, ok := cfg.Branches[b]
	if !ok || br.Remote == "" || br.Merge == "" {
		return ""
	}
	return br.Remote + "/" + br.Merge.Short()
}

// detectRenames pairs staged deletions with staged additions as git
// status does, by git's rename detection (renames.go): "R  old -> new".
func (s *session) detectRenames(entries []statusEntry, idx *index.Index) []statusEntry {
	var deleted, added []int
	for i, e := range entries {
		switch {
		case e.x == 'D':
			deleted = append(deleted, i)
		case e.x == 'A':
			added = append(added, i)
		}
	}
	if len(deleted) == 0 || len(added) == 0 {
		return entries
	}
	head, err := s.head()
	if err != nil {
		return entries
	}
	c, err := s.repo.CommitObject(head.Hash())
	if err != nil {
		return entries
	}
	tree, err := c.Tree()
	if err != nil {
		return entries
	}
	var changes []*fileChange
	at := map[*fileChange]int{}
	for _, di := range deleted {
		f, err := tree.FindEntry(entries[di].name)
		if err != nil {
			continue
		}
		ch := &fileChange{from: &side{name: entries[di].name, mode: f.Mode, hash: f.Hash, load: s.blobLoader(f.Hash)}}
		changes, at[ch] = append(changes, ch), di
	}
	for _, ai := range added {
		e, err := idx.Entry(entries[ai].name)
		if err != nil {
			continue
		}
		ch := &fileChange{to: &side{name: e.Name, mode: e.Mode, hash: e.Hash, load: s.blobLoader(e.Hash)}}
		changes, at[ch] = append(changes, ch), ai
	}
	// git pairs in path order
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].name() < changes[j].name() })
	found, err := s.findRenames(changes)
	if err != nil {
		return entries
	}
	drop := map[int]bool{}
	byName := map[string]int{}
	for i, e := range entries {
		if e.x == 'D' {
			byName[e.name] = i
		}
	}
	for _, ch := range found {
		if ch.score == 0 {
			continue
		}
		for orig, i := range at {
			if orig.to != nil && orig.to == ch.to {
				entries[i].x, entries[i].from = 'R', ch.from.name
				drop[byName[ch.from.name]] = true
			}
		}
	}
	var out []statusEntry
	for i, e := range entries {
		if !drop[i] {
			out = append(out, e)
		}
	}
	return out
}

// status computes what go-git's Worktree.Status computes (same ignore
// rules, same codes) from the HEAD tree, the index and the worktree, but
// with git's stat cache: a file is hashed only when its size, mtime or
// mode differ from its index entry, or when it is as new as the index
// ("racy git"). go-git hashes every file on every call.
func (s *session) status() (gogit.Status, error) {
	st := gogit.Status{}
	get := func(p string) *gogit.FileStatus {
		fs, ok := st[p]
		if !ok {
			fs = &gogit.FileStatus{Staging: gogit.Unmodified, Worktree: gogit.Unmodified}
			st[p] = fs
		}
		return fs
	}
	head, err := s.headSnapshot()
	if err != nil {
		return nil, err
	}
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return nil, err
	}
	// decoding the index is the largest cost here: statusEntries reuses it
	s.lastIndex = idx
	inIdx := make(map[string]*index.Entry, len(idx.Entries))
	for _, e := range idx.Entries {
		inIdx[e.Name] = e
	}
	for name, e := range inIdx {
		switch h := head[name]; {
		case h == nil:
			get(name).Staging = gogit.Added
		case h.hash != e.Hash || h.mode != e.Mode:
			get(name).Staging = gogit.Modified
		}
	}
	for name := range head {
		if inIdx[name] == nil {
			get(name).Staging = gogit.Deleted
		}
	}
	var indexTime time.Time
	if fi, err := s.inv.FS.Stat(path.Join(s.root, ".git", "index")); err == nil {
		indexTime = fi.ModTime()
	}
	for name, e := range inIdx {
		if s.ctx.Err() != nil {
			return nil, s.ctx.Err()
		}
		abs := path.Join(s.root, name)
		fi, err := s.inv.FS.Lstat(abs)
		if err != nil || fi.IsDir() {
			get(name).Worktree = gogit.Deleted
			continue
		}
		mode := filemode.Regular
		switch {
		case fi.Mode()&iofs.ModeSymlink != 0:
			mode = filemode.Symlink
		case fi.Mode()&0o111 != 0:
			mode = filemode.Executable
		}
		if mode == e.Mode && uint32(fi.Size()) == e.Size && fi.ModTime().Equal(e.ModifiedAt) && fi.ModTime().Before(indexTime) {
			continue
		}
		var data []byte
		if mode == filemode.Symlink {
			t, _ := s.inv.FS.Readlink(abs)
			data = []byte(t)
		} else if data, err = s.inv.FS.ReadFile(abs); err != nil {
			get(name).Worktree = gogit.Modified
			continue
		}
		if mode != e.Mode || plumbing.ComputeHash(plumbing.BlobObject, data) != e.Hash {
			get(name).Worktree = gogit.Modified
		}
	}
	patterns, _ := gitignore.ReadPatterns(newBilly(s.inv.FS, s.root), nil)
	m := gitignore.NewMatcher(patterns)
	var walk func(dir string, parts []string) error
	walk = func(dir string, parts []string) error {
		if s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		ents, err := s.inv.FS.ReadDir(dir)
		if err != nil {
			return nil
		}
		for _, de := range ents {
			name := de.Name()
			if len(parts) == 0 && name == ".git" {
				continue
			}
			p := append(append([]string(nil), parts...), name)
			rel := strings.Join(p, "/")
			if de.IsDir() {
				if inIdx[rel] == nil && m.Match(p, true) {
					continue
				}
				if err := walk(path.Join(dir, name), p); err != nil {
					return err
				}
				continue
			}
			if inIdx[rel] == nil && !m.Match(p, false) {
				fs := get(rel)
				fs.Staging, fs.Worktree = gogit.Untracked, gogit.Untracked
			}
		}
		return nil
	}
	if err := walk(s.root, nil); err != nil {
		return nil, err
	}
	return st, nil
}

// tracking compares branch b with its upstream: the upstream's short name
// ("" when b has none), the commits on each side only, and whether the
// upstream's ref is gone.
func (s *session) tracking(b string) (up string, ahead, behind int, gone bool) {
	up = s.upstream(b)
	if up == "" {
		return "", 0, 0, false
	}
	mine, err := s.repo.Storer.Reference(plumbing.NewBranchReferenceName(b))
	if err != nil {
		return up, 0, 0, false
	}
	theirs, err := s.repo.Storer.Reference(plumbing.NewRemoteReferenceName(strings.SplitN(up, "/", 2)[0], strings.SplitN(up, "/", 2)[1]))
	if err != nil {
		return up, 0, 0, true
	}
	if mine.Hash() == theirs.Hash() {
		return up, 0, 0, false
	}
	a, bb := s.reachable(mine.Hash()), s.reachable(theirs.Hash())
	for h := range a {
		if !bb[h] {
			ahead++
		}
	}
	for h := range bb {
		if !a[h] {
			behind++
		}
	}
	return up, ahead, behind, false
}

// reachable is every commit reachable from h (a shallow history ends
// where its objects do).
func (s *session) reachable(h plumbing.Hash) map[plumbing.Hash]bool {
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{h}
	for len(stack) > 0 && s.ctx.Err() == nil {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		co, err := s.repo.CommitObject(c)
		if err != nil {
			continue
		}
		seen[c] = true
		stack = append(stack, co.ParentHashes...)
	}
	return seen
}

// trackingLong is status's (and switch's) paragraph about the upstream.
func (s *session) trackingLong(b string) string {
	up, ahead, behind, gone := s.tracking(b)
	commits := func(n int) string { return plural(n, "commit", "commits") }
	switch {
	case up == "":
		return ""
	case gone:
		return fmt.Sprintf("Your branch is based on '%s', but the upstream is gone.\n  (use \"git branch --unset-upstream\" to fixup)\n", up)
	case ahead > 0 && behind > 0:
		return fmt.Sprintf("Your branch and '%s' have diverged,\nand have %d and %d different commits each, respectively.\n  (use \"git pull\" to merge the remote branch into yours)\n", up, ahead, behind)
	case ahead > 0:
		return fmt.Sprintf("Your branch is ahead of '%s' by %s.\n  (use \"git push\" to publish your local commits)\n", up, commits(ahead))
	case behind > 0:
		return fmt.Sprintf("Your branch is behind '%s' by %s, and can be fast-forwarded.\n  (use \"git pull\" to update your local branch)\n", up, commits(behind))
	}
	return fmt.Sprintf("Your branch is up to date with '%s'.\n", up)
}

// trackingShort is status -sb's "...origin/main [ahead 1]".
func (s *session) trackingShort(b string) string {
	up, ahead, behind, gone := s.tracking(b)
	switch {
	case up == "":
		return ""
	case gone:
		return "..." + up + " [gone]"
	case ahead > 0 && behind > 0:
		return fmt.Sprintf("...%s [ahead %d, behind %d]", up, ahead, behind)
	case ahead > 0:
		return fmt.Sprintf("...%s [ahead %d]", up, ahead)
	case behind > 0:
		return fmt.Sprintf("...%s [behind %d]", up, behind)
	}
	return "..." + up
}
