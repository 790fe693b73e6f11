package postgres

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/sandbox"
)

// gcLockKey is the advisory lock of the garbage collector (one collector
// per database, whichever node it runs on). An arbitrary constant: "warrengc".
const gcLockKey int64 = 0x7761727265_6e6763

var _ sandbox.GCLocker = (*DB)(nil)

// LockGC takes the collector's session advisory lock on a connection held
// until unlock; another collector holding it: sandbox.ErrGCBusy. A
// collector that dies loses its connection, and with it the lock.
func (db *DB) LockGC(ctx context.Context) (func(), error) {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("gc lock: %w", err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, gcLockKey).Scan(&ok); err != nil {
		conn.Release()
		return nil, fmt.Errorf("gc lock: %w", err)
	}
	if !ok {
		conn.Release()
		return nil, sandbox.ErrGCBusy
	}
	return func() {
		if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, gcLockKey); err != nil {
			// The lock is the session's: close the session to drop it.
			conn.Conn().Close(context.Background())
		}
		conn.Release()
	}, nil
}
