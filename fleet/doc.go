// Package fleet turns N `warren serve` processes sharing one PostgreSQL
// (ownership, epochs, leases: fleet.Store) and one S3 bucket (the data)
// into one service (docs/fleet.md).
//
// A Node is one member: it joins the node table with a boot id and its
// advertised URL and renews a lease on the database's clock. Its write
// gate (sandbox.WriteGate) is open only while the last renewal is younger
// than the lease minus a margin, measured on the local monotonic clock
// from before the renewal was sent, so the node stops acknowledging writes
// before any other node may consider its lease expired. A gate that closed
// reopens only after a renewal and a check of every claim the node holds
// (sandbox.Manager.Revalidate).
//
// Routing (server/forward.go asks Route): the owner of a sandbox is read
// from the store and cached briefly, invalidated by LISTEN/NOTIFY on owner
// changes and on a 421 from a peer. An owner whose lease expired, or none,
// means the receiving node takes the sandbox over (Store.TakeOver: one
// statement, epoch+1) and resumes it lazily from its last committed
// generation. Placement of a new sandbox is power-of-two choices over
// load = running sandboxes / capacity among live, non-draining nodes that
// carry the request's node_selector labels.
package fleet
