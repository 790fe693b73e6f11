package vfs

// LastGeneration is the generation this FS last persisted to or was
// loaded from (ok false: neither). Persist reuses the packs of the nodes
// unchanged since, so a collector must keep what it reaches.
func (f *FS) LastGeneration() (Ref, bool) {
	if m := f.lastGen.Load(); m != nil {
		return m.ref, true
	}
	return Ref{}, false
}
