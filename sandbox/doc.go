// Package sandbox is warren's lifecycle: it creates sandboxes (a vfs over a
// base image plus named shell sessions), runs execs in them, serves their
// files, hibernates them to a StateRef in the blob store, resumes them on the
// next request, forks and snapshots them, and deletes them.
//
// # State machine
//
// Every sandbox is in exactly one state; all transitions happen under the
// sandbox's own mutex, so concurrent calls serialise per sandbox and never
// see a half-made transition.
//
//	            create / fork of a running sandbox
//	                         │
//	                         ▼
//	   ┌──────────────── running ◄──────────────┐
//	   │  hibernate          │  (exec, files,    │ resume: explicit, or any
//	   │  (explicit, idle    │   process, fork,  │ request that needs the
//	   │  standby_after,     │   snapshot keep   │ interpreter or the files;
//	   │  shutdown)          │   it running)     │ idempotent
//	   ▼                     │                   │
//	standby ─────────────────┼───────────────────┘
//	   │  (create from snapshot, fork of a standby sandbox and restart
//	   │   start here: they hold a StateRef and resume on first use)
//	   │                     │
//	   └──── delete ─────────┴──── delete / ttl ──► deleted (terminal: 404)
//
// Invariants:
//   - running: the sandbox holds its vfs and its sessions' interpreters in
//     memory; "active" counts the execs, file calls, background processes
//     and forks in flight. Only active == 0 may hibernate: explicit
//     hibernate of a busy sandbox fails with ErrFailedPrecondition, and the
//     idle timer never fires while anything is in flight.
//   - standby: the sandbox holds only its Record and StateRef (a few
//     hundred bytes); hibernate of a standby sandbox returns at once, as
//     does resume of a running one.
//   - deleted: terminal. Execs in flight are cancelled; every later call
//     returns ErrNotFound. Blobs its StateRefs named are left to the store's
//     garbage collection, since forks and snapshots may share them.
//
// Native tier (native.go): ELF files run in a per-sandbox native workspace
// (package native), created by the first ELF exec of a running sandbox and
// closed on hibernate, delete and shutdown; a native command in flight
// counts as active. Files: the vfs sees a native command's writes when it
// ends, and every API file call and exec start harvests first while one is
// still running (the consistency rule in native.go). A sandbox's limits
// bound it: max_memory_bytes (cgroup memory, kill at excess), cpus, pids,
// disk_bytes (the writable layer); native: false refuses ELF files.
//
// A StateRef is the content address (sha256) of a small JSON document
// naming the base image digest, the vfs delta root (persisted by the vfs
// into the blob store) and the sessions' serialized shell states.
//
// Persistence on one node: records live in a Meta (in memory, or bbolt via
// package sandbox/boltmeta); Close hibernates every sandbox, so a restarted
// Manager resumes each from its last StateRef. Work since the last
// hibernate is lost on a crash (kill -9); the write log is a later issue.
package sandbox
