package sandbox

import (
	"context"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/vfs"
)

// File watches compare versions of the sandbox's delta: every tick the
// watcher takes a snapshot (a root pointer) and vfs.Diff reports what
// differs from the last one, at a cost that follows the change, not the
// tree. So every writer is seen: the API, resident commands, WASM, and
// native processes once their upper layer is harvested (before each
// exec and file call, and every watchHarvest while one runs and a watch
// is open). Events between two ticks are coalesced the way the
// vfs sees them (a file created and removed in one tick is not seen).

const (
	watchTick = 50 * time.Millisecond
	// watchBuffer bounds the events waiting for a slow client; past it
	// they are dropped and an overflow event says how many.
	watchBuffer = 4096
	// watchMaxPerTick bounds one diff's events (a tar extract): past it,
	// overflow instead of the rest.
	watchMaxPerTick = 10000
	// watchHarvest is how often a watch brings in what running native
	// processes wrote (a walk of their upper layer).
	watchHarvest = 500 * time.Millisecond
)

var _ api.FileWatcher = (*tenantView)(nil)

func (t *tenantView) WatchFiles(ctx context.Context, id string, req api.WatchRequest, fn func(api.WatchEvent) error) error {
	b, err := t.box(id)
	if err != nil {
		return err
	}
	return t.m.watch(ctx, b, req, fn)
}

func (m *Manager) watch(ctx context.Context, b *box, req api.WatchRequest, fn func(api.WatchEvent) error) error {
	p := req.Path
	if p == "" {
		p = "/"
	}
	if err := checkPath(p); err != nil {
		return err
	}
	p = path.Clean(p)
	var prev *vfs.FS
	var live *vfs.FS
	err := b.withFS(ctx, func(fsys *vfs.FS) error {
		fi, err := fsys.Stat(p)
		if err != nil {
			return fsErr(err)
		}
		if !fi.IsDir() {
			return api.Errorf(errdefs.ErrInvalidArgument, "%s is not a directory: watch a directory", p)
		}
		live, prev = fsys, fsys.Snapshot()
		return nil
	})
	if err != nil {
		return err
	}
	events := make(chan api.WatchEvent, watchBuffer)
	dropped := 0
	push := func(ev api.WatchEvent) {
		if dropped > 0 {
			select {
			case events <- api.WatchEvent{Type: api.WatchOverflow, Dropped: dropped}:
				dropped = 0
			default:
				dropped++
				return
			}
		}
		select {
		case events <- ev:
		default:
			dropped++
		}
	}
	// The closing event must not be lost to a full buffer.
	final := func(ctx context.Context, ev api.WatchEvent) {
		select {
		case events <- ev:
		case <-ctx.Done():
		}
	}
	if err := fn(api.WatchEvent{Type: api.WatchReady, Name: "."}); err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(events)
		tick := time.NewTicker(watchTick)
		defer tick.Stop()
		var harvested time.Time
		for {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
			}
			b.mu.Lock()
			state, fsys := b.state, b.fs
			b.mu.Unlock()
			if fsys != live {
				reason := "hibernated"
				if state == api.StateDeleted {
					reason = "deleted"
				}
				final(wctx, api.WatchEvent{Type: api.WatchClosed, Reason: reason})
				return
			}
			if b.nativeRunning.Load() > 0 && time.Since(harvested) >= watchHarvest {
				// A long-running native process: bring its writes in
				// now rather than at the next exec.
				harvested = time.Now()
				b.harvestNative(wctx)
			}
			cur := fsys.Snapshot()
			if gone := diffEvents(prev, cur, p, req.Recursive, push); gone {
				final(wctx, api.WatchEvent{Type: api.WatchRemove, Name: "."})
				final(wctx, api.WatchEvent{Type: api.WatchClosed, Reason: "removed"})
				return
			}
			prev = cur
			if dropped > 0 {
				select {
				case events <- api.WatchEvent{Type: api.WatchOverflow, Dropped: dropped}:
					dropped = 0
				default:
				}
			}
		}
	}()
	defer func() { cancel(); <-done }()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			if err := fn(ev); err != nil {
				return err
			}
			if ev.Type == api.WatchClosed {
				return nil
			}
		case <-ctx.Done():
			return nil
		case <-b.runCtx.Done():
			reason := "shutdown"
			b.mu.Lock()
			if b.state == api.StateDeleted {
				reason = "deleted"
			}
			b.mu.Unlock()
			fn(api.WatchEvent{Type: api.WatchClosed, Reason: reason})
			return nil
		}
	}
}

// diffEvents reports the changes from old to cur under dir (its children
// only unless recursive) and whether dir itself is gone.
func diffEvents(old, cur *vfs.FS, dir string, recursive bool, push func(api.WatchEvent)) (gone bool) {
	type change struct {
		path string
		kind vfs.ChangeKind
	}
	var changes []change
	over := false
	vfs.Diff(old, cur, func(p string, k vfs.ChangeKind) error {
		if p == dir && k == vfs.Deleted {
			gone = true
		}
		if rel, ok := relName(dir, p, recursive); ok && rel != "." {
			if len(changes) >= watchMaxPerTick {
				over = true
				return nil
			}
			changes = append(changes, change{rel, k})
		}
		return nil
	})
	if gone {
		if _, err := cur.Stat(dir); err == nil {
			gone = false // replaced by a new directory
		} else {
			return true
		}
	}
	full := func(rel string) string { return path.Join(dir, rel) }
	// A rename is a delete and an add of one inode in the same tick.
	added := map[uint64]int{}
	for i, c := range changes {
		if c.kind == vfs.Added {
			if fi, err := cur.Lstat(full(c.path)); err == nil {
				added[ino(fi)] = i
			}
		}
	}
	renamed := map[int]string{}
	skip := map[int]bool{}
	for i, c := range changes {
		if c.kind != vfs.Deleted {
			continue
		}
		fi, err := old.Lstat(full(c.path))
		if err != nil {
			continue
		}
		if j, ok := added[ino(fi)]; ok && ino(fi) != 0 {
			renamed[j] = c.path
			skip[i] = true
		}
	}
	for i, c := range changes {
		if skip[i] {
			continue
		}
		switch c.kind {
		case vfs.Deleted:
			push(api.WatchEvent{Type: api.WatchRemove, Name: c.path})
		case vfs.Added:
			fi, err := cur.Lstat(full(c.path))
			if err != nil {
				continue
			}
			if from, ok := renamed[i]; ok {
				push(api.WatchEvent{Type: api.WatchRename, Name: c.path, OldName: from, FileType: fileType(fi)})
				continue
			}
			push(api.WatchEvent{Type: api.WatchCreate, Name: c.path, FileType: fileType(fi)})
			if fi.IsDir() && recursive {
				// vfs.Diff names a new directory, not what is in it.
				budget := watchMaxPerTick
				walkNew(cur, full(c.path), c.path, &budget, push)
				if budget <= 0 {
					over = true
				}
			}
		case vfs.Modified:
			a, aerr := old.Lstat(full(c.path))
			n, err := cur.Lstat(full(c.path))
			if err != nil {
				continue
			}
			switch {
			case aerr != nil:
				push(api.WatchEvent{Type: api.WatchCreate, Name: c.path, FileType: fileType(n)})
			case n.IsDir():
				// A directory's entries changed: its children say how.
				if a.Mode() != n.Mode() || owner(a) != owner(n) {
					push(api.WatchEvent{Type: api.WatchChmod, Name: c.path, FileType: "dir"})
				}
			case a.Size() != n.Size() || !a.ModTime().Equal(n.ModTime()):
				push(api.WatchEvent{Type: api.WatchWrite, Name: c.path, FileType: fileType(n)})
			case a.Mode() != n.Mode() || owner(a) != owner(n):
				push(api.WatchEvent{Type: api.WatchChmod, Name: c.path, FileType: fileType(n)})
			}
		}
	}
	if over {
		push(api.WatchEvent{Type: api.WatchOverflow})
	}
	return false
}

// walkNew reports everything under a new directory as created, up to
// budget entries.
func walkNew(fsys *vfs.FS, p, rel string, budget *int, push func(api.WatchEvent)) {
	ents, err := fsys.ReadDir(p)
	if err != nil {
		return
	}
	for _, e := range ents {
		if *budget <= 0 {
			return
		}
		*budget--
		name := rel + "/" + e.Name()
		fi, err := e.Info()
		if err != nil {
			continue
		}
		push(api.WatchEvent{Type: api.WatchCreate, Name: name, FileType: fileType(fi)})
		if e.IsDir() {
			walkNew(fsys, p+"/"+e.Name(), name, budget, push)
		}
	}
}

// relName is p relative to dir, if the watch covers it.
func relName(dir, p string, recursive bool) (string, bool) {
	var rel string
	switch {
	case p == dir:
		return ".", true
	case dir == "/":
		rel = strings.TrimPrefix(p, "/")
	case strings.HasPrefix(p, dir+"/"):
		rel = p[len(dir)+1:]
	default:
		return "", false
	}
	if !recursive && strings.Contains(rel, "/") {
		return "", false
	}
	return rel, true
}

func ino(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*vfs.Stat); ok {
		return st.Ino
	}
	if st, ok := fi.Sys().(vfs.Stat); ok {
		return st.Ino
	}
	return 0
}

func owner(fi fs.FileInfo) [2]uint32 {
	if st, ok := fi.Sys().(*vfs.Stat); ok {
		return [2]uint32{st.Uid, st.Gid}
	}
	if st, ok := fi.Sys().(vfs.Stat); ok {
		return [2]uint32{st.Uid, st.Gid}
	}
	return [2]uint32{}
}

func fileType(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}
