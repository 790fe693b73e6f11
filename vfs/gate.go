package vfs

// A write gate holds back writers of an FS whose owner is over a budget
// of data not yet made durable (DESIGN.md "Durability": budgets). The FS
// calls it before every operation that can add data or inodes (not
// before removes, renames or closes, which only give back), outside its
// lock, so the gate may block while a commit of a fork of this FS runs.
// A non-nil error refuses the operation: it comes back as the Err of a
// *fs.PathError, unchanged.

// SetWriteGate installs g (nil removes it). Forks do not inherit it.
func (f *FS) SetWriteGate(g func() error) {
	if g == nil {
		f.gate.Store(nil)
		return
	}
	f.gate.Store(&g)
}

// gated reports whether op can add data (see update's callers).
func gated(op string) bool {
	switch op {
	case "remove", "unlinkat", "rename", "close":
		return false
	}
	return true
}

func (f *FS) passGate(op, name string) error {
	g := f.gate.Load()
	if g == nil || !gated(op) {
		return nil
	}
	if err := (*g)(); err != nil {
		return perr(op, name, err)
	}
	return nil
}
