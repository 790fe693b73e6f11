package wasm

import (
	"github.com/tetratelabs/wazero/experimental"
	"github.com/warren-sandbox/warren/commands"
)

// linearMemory backs one instance's memory: every growth is charged to the
// sandbox's memory budget and refused past the instance's limit, so a
// module cannot take more of the node than its sandbox may. A refused
// growth makes memory.grow return -1 to the module; most runtimes then
// abort, and Run reports the limit that refused it.
type linearMemory struct {
	buf     []byte
	limit   uint64
	res     *commands.Reservation
	refused error // why the last growth was refused (errLimit or the budget's error)
}

type limitError struct{}

func (limitError) Error() string { return "instance memory limit" }

var errLimit error = limitError{}

func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.refused = errLimit
		return nil
	}
	if grow := int64(size) - int64(len(m.buf)); grow > 0 {
		if err := m.res.Grow(grow); err != nil {
			m.refused = err
			return nil
		}
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	// Grow the capacity geometrically (bounded by the limit) so a module
	// growing page by page does not copy its memory every time.
	c := min(max(size, uint64(cap(m.buf))*2), m.limit)
	nb := make([]byte, size, c)
	copy(nb, m.buf)
	m.buf = nb
	return nb
}

func (m *linearMemory) Free() { m.buf = nil }

// allocator returns the per-instance allocator and the memory it made.
func allocator(limit uint64, res *commands.Reservation) (experimental.MemoryAllocator, **linearMemory) {
	var made *linearMemory
	return experimental.MemoryAllocatorFunc(func(c, _ uint64) experimental.LinearMemory {
		made = &linearMemory{limit: limit, res: res}
		made.Reallocate(min(c, limit))
		return made
	}), &made
}
