package git

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The stash is kept as git keeps it: refs/stash names the newest entry and
// the reflog .git/logs/refs/stash lists all of them, oldest first. Each
// entry is a commit whose tree is the worktree, with parents HEAD and a
// commit of the index. Untracked files are not stashed (as git's default).

type stashEntry struct {
	old, hash plumbing.Hash
	line      string // the whole reflog line
	msg       string
}

func (s *session) stashLog() string { return path.Join(s.root, ".git", "logs", "refs", "stash") }

func (s *session) stashEntries() []stashEntry {
	data, err := s.inv.FS.ReadFile(s.stashLog())
	if err != nil {
		return nil
	}
	var out []stashEntry
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) < 3 {
			continue
		}
		_, msg, _ := strings.Cut(l, "\t")
		out = append(out, stashEntry{old: plumbing.NewHash(f[0]), hash: plumbing.NewHash(f[1]), line: l, msg: msg})
	}
	return out
}

func (s *session) writeStash(entries []stashEntry) error {
	if len(entries) == 0 {
		s.inv.FS.Remove(s.stashLog())
		return s.repo.Storer.RemoveReference("refs/stash")
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.line + "\n")
	}
	s.inv.FS.MkdirAll(path.Dir(s.stashLog()), 0o755)
	if err := s.inv.FS.WriteFile(s.stashLog(), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return s.repo.Storer.SetReference(plumbing.NewHashReference("refs/stash", entries[len(entries)-1].hash))
}

func cmdStash(s *session, args []string) error {
	if err := s.open(); err != nil {
		return err
	}
	sub := "push"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "push", "save":
		msg := ""
		for i := 0; i < len(args); i++ {
			switch {
			case args[i] == "-m" && i+1 < len(args):
				i++
				msg = args[i]
			case args[i] == "-q" || args[i] == "--quiet":
				s.quiet = true
			case sub == "save" && !strings.HasPrefix(args[i], "-"):
				msg = strings.Join(args[i:], " ")
				i = len(args)
			default:
				return unknownOpt(args[i])
			}
		}
		return s.stashPush(msg)
	case "list":
		entries := s.stashEntries()
		for i := len(entries) - 1; i >= 0; i-- {
			fmt.Fprintf(s.out, "stash@{%d}: %s\n", len(entries)-1-i, entries[i].msg)
		}
		return nil
	case "pop", "apply", "drop", "show":
		n := 0
		for _, a := range args {
			if a == "-q" || a == "--quiet" {
				s.quiet = true
				continue
			}
			if a == "--index" || a == "--stat" {
				continue
			}
			k, err := stashIndex(a)
			if err != nil {
				return err
			}
			n = k
		}
		entries := s.stashEntries()
		if n >= len(entries) {
			if len(entries) == 0 {
				return errorf(1, "No stash entries found.")
			}
			return errorf(1, "error: stash@{%d} is not a valid reference", n)
		}
		at := len(entries) - 1 - n
		e := entries[at]
		switch sub {
		case "show":
			c, err := s.repo.CommitObject(e.hash)
			if err != nil {
				return err
			}
			changes, err := s.commitChanges(c)
			if err != nil {
				return err
			}
			writeStat(s.out, changes)
			return nil
		case "pop", "apply":
			if err := s.stashApply(e.hash); err != nil {
				return err
			}
			if sub == "apply" {
				return nil
			}
		}
		entries = append(entries[:at], entries[at+1:]...)
		if err := s.writeStash(entries); err != nil {
			return err
		}
		if !s.quiet {
			fmt.Fprintf(s.out, "Dropped refs/stash@{%d} (%s)\n", n, e.hash)
		}
		return nil
	case "clear":
		return s.writeStash(nil)
	}
	return unsupported(sub) // branch, create, store...: real git has them
}

func stashIndex(a string) (int, error) {
	v := strings.TrimSuffix(strings.TrimPrefix(a, "stash@{"), "}")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errorf(1, "error: %s is not a valid reference", a)
	}
	return n, nil
}

func (s *session) stashPush(msg string) error {
	head, err := s.head()
	if err != nil {
		return errorf(1, "You do not have the initial commit yet")
	}
	st, err := s.status()
	if err != nil {
		return err
	}
	dirty := false
	for _, fs := range st {
		if fs.Worktree == gogit.Untracked {
			continue
		}
		if fs.Staging != gogit.Unmodified || fs.Worktree != gogit.Unmodified {
			dirty = true
		}
	}
	if !dirty {
		fmt.Fprintln(s.out, "No local changes to save")
		return nil
	}
	hc, err := s.repo.CommitObject(head.Hash())
	if err != nil {
		return err
	}
	branch, ok := s.branchName()
	if !ok {
		branch = "(no branch)"
	}
	desc := fmt.Sprintf("%s: %s %s", branch, short(hc.Hash), firstLine(hc.Message))
	if msg == "" {
		msg = "WIP on " + desc
	} else {
		msg = "On " + branch + ": " + msg
	}
	sig, err := s.signature("COMMITTER")
	if err != nil {
		return err
	}
	idx, err := s.indexSnapshot()
	if err != nil {
		return err
	}
	itree, err := s.writeTree(idx)
	if err != nil {
		return err
	}
	ic, err := s.storeCommit(itree, "index on "+desc+"\n", sig, head.Hash())
	if err != nil {
		return err
	}
	work, err := s.worktreeSnapshot(idx)
	if err != nil {
		return err
	}
	wtree, err := s.writeTree(work)
	if err != nil {
		return err
	}
	wc, err := s.storeCommit(wtree, msg, sig, head.Hash(), ic) // git stores no trailing newline here
	if err != nil {
		return err
	}
	entries := s.stashEntries()
	old := plumbing.ZeroHash
	if len(entries) > 0 {
		old = entries[len(entries)-1].hash
	}
	line := fmt.Sprintf("%s %s %s <%s> %d %s\t%s", old, wc, sig.Name, sig.Email, sig.When.Unix(), sig.When.Format("-0700"), msg)
	if err := s.writeStash(append(entries, stashEntry{old: old, hash: wc, line: line, msg: msg})); err != nil {
		return err
	}
	if err := s.hardReset(head.Hash()); err != nil {
		return fatalf("%v", err)
	}
	if !s.quiet {
		fmt.Fprintf(s.out, "Saved working directory and index state %s\n", msg)
	}
	return nil
}

// stashApply replays a stash's worktree changes onto the worktree.
func (s *session) stashApply(h plumbing.Hash) error {
	c, err := s.repo.CommitObject(h)
	if err != nil {
		return fatalf("%s is not a stash-like commit", h)
	}
	changes, err := s.commitChanges(c)
	if err != nil {
		return err
	}
	st, err := s.status()
	if err != nil {
		return err
	}
	var clash []string
	for _, ch := range changes {
		if fs, ok := st[ch.name()]; ok && fs.Worktree != gogit.Unmodified && fs.Worktree != gogit.Untracked || ok && fs.Staging != gogit.Unmodified {
			clash = append(clash, ch.name())
		}
	}
	if len(clash) > 0 {
		sort.Strings(clash)
		return errorf(1, "error: Your local changes to the following files would be overwritten by merge:\n\t%s\nPlease commit your changes or stash them before you merge.\nAborting", strings.Join(clash, "\n\t"))
	}
	idx, err := s.repo.Storer.Index()
	if err != nil {
		return err
	}
	for _, ch := range changes {
		if ch.to == nil {
			// a deletion comes back unstaged, as git stash apply does
			s.inv.FS.Remove(path.Join(s.root, ch.from.name))
			continue
		}
		if err := s.writeWorktree(ch.to.name, ch.to); err != nil {
			return err
		}
		if ch.from == nil {
			// a file that was new in the stash is staged again, as git does
			e, err := idx.Entry(ch.to.name)
			if err != nil {
				e = idx.Add(ch.to.name)
			}
			data, _ := ch.to.load()
			e.Hash, e.Mode, e.Size = ch.to.hash, ch.to.mode, uint32(len(data))
		}
	}
	if err := s.repo.Storer.SetIndex(idx); err != nil {
		return err
	}
	if s.quiet {
		return nil
	}
	st, err = s.status()
	if err == nil {
		s.longStatus(st, false)
	}
	return nil
}

// writeTree stores the tree objects (and any missing blobs) for snap.
func (s *session) writeTree(snap snapshot) (plumbing.Hash, error) {
	type dir struct {
		files map[string]*side
		dirs  map[string]*dir
	}
	root := &dir{files: map[string]*side{}, dirs: map[string]*dir{}}
	for name, sd := range snap {
		d := root
		parts := strings.Split(name, "/")
		for _, p := range parts[:len(parts)-1] {
			sub, ok := d.dirs[p]
			if !ok {
				sub = &dir{files: map[string]*side{}, dirs: map[string]*dir{}}
				d.dirs[p] = sub
			}
			d = sub
		}
		d.files[parts[len(parts)-1]] = sd
	}
	var write func(d *dir) (plumbing.Hash, error)
	write = func(d *dir) (plumbing.Hash, error) {
		t := &object.Tree{}
		for name, sd := range d.files {
			if !s.hasObject(sd.hash) {
				data, err := sd.load()
				if err != nil {
					return plumbing.ZeroHash, err
				}
				obj := s.repo.Storer.NewEncodedObject()
				obj.SetType(plumbing.BlobObject)
				w, _ := obj.Writer()
				w.Write(data)
				w.Close()
				if _, err := s.repo.Storer.SetEncodedObject(obj); err != nil {
					return plumbing.ZeroHash, err
				}
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: sd.mode, Hash: sd.hash})
		}
		for name, sub := range d.dirs {
			h, err := write(sub)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
		}
		// git orders tree entries by name, directories as if they ended in "/"
		key := func(e object.TreeEntry) string {
			if e.Mode == filemode.Dir {
				return e.Name + "/"
			}
			return e.Name
		}
		sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
		obj := s.repo.Storer.NewEncodedObject()
		if err := t.Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return s.repo.Storer.SetEncodedObject(obj)
	}
	return write(root)
}

func (s *session) hasObject(h plumbing.Hash) bool {
	return s.repo.Storer.HasEncodedObject(h) == nil
}

func (s *session) storeCommit(tree plumbing.Hash, msg string, sig *object.Signature, parents ...plumbing.Hash) (plumbing.Hash, error) {
	c := &object.Commit{Author: *sig, Committer: *sig, Message: msg, TreeHash: tree, ParentHashes: parents}
	obj := s.repo.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.repo.Storer.SetEncodedObject(obj)
}
