package wlog

import (
	"errors"
	"fmt"
	"slices"
)

// Trim marks the records of sandbox up to and including seq obsolete
// (their change is in a committed generation) and deletes every segment
// whose records are all obsolete. The active segment is deleted only after
// it rolled. Trim state lives in memory (see the package doc).
func (l *Log) Trim(sandbox string, seq uint64) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	if t, ok := l.trim[sandbox]; !ok || seq > t {
		l.trim[sandbox] = seq
	}
	l.mu.Unlock()
	return l.collect()
}

// Abandon drops every record of sandbox (the node no longer owns it, so
// its uncommitted changes cannot be published) and returns how many
// records were dropped that no Trim had covered: the writes lost, for the
// log and /metrics. Appends of the sandbox may go on afterwards with
// higher sequence numbers (a later claim at a new epoch).
func (l *Log) Abandon(sandbox string) (int, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, ErrClosed
	}
	dropped := 0
	for _, s := range l.segs {
		dropped += s.liveOf(sandbox, l.trim)
	}
	t, trimmed := l.trim[sandbox]
	for _, r := range l.queue {
		if r.rec.Sandbox == sandbox && (!trimmed || r.rec.Seq > t) {
			dropped++
		}
	}
	if last, ok := l.last[sandbox]; ok {
		l.trim[sandbox] = max(last, t)
	}
	l.stats.Abandoned += int64(dropped)
	l.mu.Unlock()
	if dropped > 0 {
		l.log.Warn("wlog: abandoned the uncommitted writes of a sandbox this node no longer owns",
			"sandbox", sandbox, "records", dropped)
	}
	return dropped, l.collect()
}

func (s *segment) liveOf(sandbox string, trim map[string]uint64) int {
	seqs := s.seqs[sandbox]
	t, ok := trim[sandbox]
	if !ok {
		return len(seqs)
	}
	i, _ := slices.BinarySearch(seqs, t+1)
	return len(seqs) - i
}

// collect deletes the segments (other than the active one) whose records
// are all obsolete. Before Replay finished it does nothing: Replay reads
// them.
func (l *Log) collect() error {
	l.mu.Lock()
	if !l.replayed {
		l.mu.Unlock()
		return nil
	}
	var dead []*segment
	keep := l.segs[:0:0]
	for _, s := range l.segs {
		if s != l.active && s.live(l.trim) == 0 {
			dead = append(dead, s)
		} else {
			keep = append(keep, s)
		}
	}
	l.segs = keep
	l.mu.Unlock()
	if len(dead) == 0 {
		return nil
	}
	var errs []error
	var failed []*segment
	for _, s := range dead {
		if err := l.fs.Remove(s.path); err != nil {
			errs = append(errs, fmt.Errorf("wlog: cannot delete %s: %w", s.path, err))
			failed = append(failed, s)
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		errs = append(errs, fmt.Errorf("wlog: cannot fsync %s: %w", l.dir, err))
	}
	l.mu.Lock()
	l.stats.Deleted += int64(len(dead) - len(failed))
	if len(failed) > 0 {
		// Keep them listed so a later collect tries again.
		l.segs = append(l.segs, failed...)
		slices.SortFunc(l.segs, func(a, b *segment) int { return cmpU64(a.n, b.n) })
	}
	l.mu.Unlock()
	return errors.Join(errs...)
}
