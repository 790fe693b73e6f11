// Package wlog is a node's write log: append-only segment files of
// checksummed records, each the net change of one exec or file call of one
// sandbox, fsynced before the caller acknowledges the write at the `local`
// level (DESIGN.md "Durability", docs/format.md "Write log").
//
// Lifecycle: Open the log's directory (one process at a time: a lock file
// guards it), Replay once (it yields every intact record in log order and
// truncates a torn tail), then Append from any number of goroutines.
// Append returns after its record is fsynced; concurrent appends share one
// write and one fsync (group commit by a single flusher goroutine).
// Segments roll at Options.SegmentBytes. Once a sandbox's records up to a
// sequence number are in a committed generation, Trim marks them obsolete;
// a segment whose records are all obsolete is deleted. Abandon drops a
// sandbox the node no longer owns and says how many records it lost.
//
// Trim state is recomputable, not stored: after a restart, Replay yields
// records trimmed before the crash whose segments survived, and the caller
// skips them against its committed state (a generation records the last
// sequence number it holds) and calls Trim again. Moving a head (in the
// metadata store) and trimming (on local disk) can never be one atomic
// step, so a caller must do that skip anyway; storing trims would cost an
// fsync per commit and save only replay work.
//
// The package knows nothing of sandboxes, stores or vfs: a payload is
// opaque bytes, a sandbox is a name.
//
// After a failed write or fsync the log is broken: the waiters of that
// group and every later Append get an error wrapping ErrBroken, never an
// acknowledgement (after a failed fsync the kernel may have dropped the
// dirty pages, so retrying it could report success for lost data). Reopen
// the log to go on; Replay then keeps whatever did reach the disk.
package wlog
