// Package api holds warren's wire types: the JSON bodies of the HTTP API,
// the error classes and their mapping to statuses, and the Service interface
// that both the in-process sandbox manager and the HTTP client implement, so
// one behaviour suite runs against each. It imports nothing of warren.
package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Duration is a time.Duration that travels as a Go duration string ("15s",
// "250ms"); a bare JSON number is taken as seconds.
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		f, ferr := strconv.ParseFloat(string(b), 64)
		if ferr != nil {
			return fmt.Errorf("duration must be a string like \"15s\" or a number of seconds, not %s", b)
		}
		*d = Duration(f * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Sandbox states; see the state machine in package sandbox.
const (
	StateRunning = "running" // interpreter and filesystem in memory
	StateStandby = "standby" // hibernated to a StateRef; resumes on any request
	StateDeleted = "deleted"
)

// Limits bound what one sandbox may use. Zero means the default
// (DefaultLimits, or what the server was started with); docs/limits.md
// lists them.
type Limits struct {
	// Timeout bounds one exec; an exec may ask for less.
	Timeout Duration `json:"timeout,omitempty"`
	// MaxOutputBytes bounds stdout+stderr of one exec.
	MaxOutputBytes int64 `json:"max_output_bytes,omitempty"`
	// MaxMemoryBytes is the sandbox's memory budget: what its shells and
	// resident commands hold (one budget shared by every session and
	// background process of the sandbox) and, in the native tier, the
	// memory of its processes (cgroup; a process over it is killed,
	// status 137).
	MaxMemoryBytes int64 `json:"max_memory_bytes,omitempty"`
	// DiskBytes and DiskInodes bound the sandbox's delta (DiskBytes also
	// sizes the native tier's writable layer).
	DiskBytes  int64 `json:"disk_bytes,omitempty"`
	DiskInodes int64 `json:"disk_inodes,omitempty"`
	// Jobs bounds what one session runs at once: background jobs (&) and
	// pipeline stages.
	Jobs int64 `json:"jobs,omitempty"`
	// Native allows ELF files to run in the native tier (namespaces over
	// OverlayFS). Absent: on when the node offers it; false refuses ELF
	// execution with a message that says so.
	Native *bool `json:"native,omitempty"`
	// CPUs is the native tier's CPU quota in cores (e.g. 0.5).
	CPUs float64 `json:"cpus,omitempty"`
	// Pids bounds the native tier's processes and threads.
	Pids int64 `json:"pids,omitempty"`
}

// DefaultLimits are the one set of defaults that `warren run`, `warren
// serve` (the API) and the Go library (sandbox.Manager) apply to every
// limit a caller leaves zero. docs/limits.md explains each choice; the
// flags of `warren run` and `warren sandbox create` change them.
var DefaultLimits = Limits{
	// Long enough for a build or a test suite, short enough that a
	// forgotten loop does not hold a session for an afternoon.
	Timeout: Duration(5 * time.Minute),
	// More than any agent reads back; a `yes` flood stops here.
	MaxOutputBytes: 64 << 20,
	// A sandbox's budget: 4 of them fit in 1 GiB of node RAM with room
	// for the node itself.
	MaxMemoryBytes: 256 << 20,
	// Policy, not a memory bound: committed data leaves memory for the
	// blob store (read back through the node's chunk cache), so a
	// sandbox may be given up to what the store holds.
	DiskBytes:  1 << 30,
	DiskInodes: 1 << 20,
	// The shell's own bound on goroutines per session.
	Jobs: 256,
	// One core of native CPU: a busy loop cannot take a 2-core node.
	CPUs: 1,
	// Room for make -j and a test runner; a fork bomb stops here.
	Pids: 256,
}

// WithDefaults returns l with every zero field taken from d.
func (l Limits) WithDefaults(d Limits) Limits {
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = d.MaxOutputBytes
	}
	if l.MaxMemoryBytes <= 0 {
		l.MaxMemoryBytes = d.MaxMemoryBytes
	}
	if l.DiskBytes <= 0 {
		l.DiskBytes = d.DiskBytes
	}
	if l.DiskInodes <= 0 {
		l.DiskInodes = d.DiskInodes
	}
	if l.Jobs <= 0 {
		l.Jobs = d.Jobs
	}
	if l.Native == nil {
		l.Native = d.Native
	}
	if l.CPUs <= 0 {
		l.CPUs = d.CPUs
	}
	if l.Pids <= 0 {
		l.Pids = d.Pids
	}
	return l
}

// NativeAllowed reports whether l lets ELF files run natively (absent
// means yes: the node decides whether it can).
func (l Limits) NativeAllowed() bool { return l.Native == nil || *l.Native }

// CreateRequest is the body of POST /v1/sandboxes.
type CreateRequest struct {
	Image    string            `json:"image,omitempty"`    // default: the embedded image
	Snapshot string            `json:"snapshot,omitempty"` // start from this snapshot instead
	Env      map[string]string `json:"env,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	User     string            `json:"user,omitempty"`
	Hostname string            `json:"hostname,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Limits   Limits            `json:"limits,omitempty"`
	// StandbyAfter is the idle time before automatic hibernation
	// (default 15s; negative disables it).
	StandbyAfter Duration `json:"standby_after,omitempty"`
	// StandbyWithJobs lets the idle timer put the sandbox in standby
	// while background jobs (`cmd &`) still run, ending them (their
	// processes show status 143, limit "standby"). Default false: a live
	// job keeps the sandbox running (not idle) up to its time limit.
	StandbyWithJobs bool `json:"standby_with_jobs,omitempty"`
	// TTL deletes the sandbox this long after creation (0: never).
	TTL Duration `json:"ttl,omitempty"`
	// Durability is the sandbox's default ack level for execs and file
	// writes ("" = the server's, see DurabilityMemory).
	Durability string `json:"durability,omitempty"`
	// Security is the native tier's confinement: SecurityDefault (Docker's
	// seccomp allowlist and capabilities, masked /proc; "" means it) or
	// SecurityRelaxed (none of those, for trusted images that need, e.g.,
	// nested containers; README "Security").
	Security string `json:"security,omitempty"`
	// FromGeneration starts the sandbox from a retained generation of
	// another sandbox of the tenant (instead of Image or Snapshot); the
	// new sandbox keeps that one's configuration unless the request
	// overrides a field, and pins the generation.
	FromGeneration *GenerationRef `json:"from_generation,omitempty"`
	// Retention is which of the sandbox's generations stay (nil:
	// DefaultRetention).
	Retention *Retention `json:"retention,omitempty"`
	// NodeSelector places the sandbox on a fleet node carrying all these
	// labels (warren serve --node-label; docs/fleet.md "Placement").
	NodeSelector map[string]string `json:"node_selector,omitempty"`
	// Network is the sandbox's egress policy (nil: no network at all;
	// README "Network"). Default deny: only what Allow names is reached.
	Network *NetworkPolicy `json:"network,omitempty"`
	// Secrets are credentials the sandbox never sees: its env holds
	// placeholders the egress layer swaps for the values on requests to
	// the secrets' hosts over TLS. Kept in memory only, never stored.
	Secrets []SecretSpec `json:"secrets,omitempty"`
	// Commands is the commands policy (README "Choosing where commands
	// run"): resident-first (default), native-first or resident-only,
	// plus per-command overrides NAME=native|resident|resident-only
	// ("native-first,git=resident", "git=native,python=native").
	Commands string `json:"commands,omitempty"`
	// Volumes are attached at create (api/volumes.go): at most one live
	// sandbox holds a volume read-write; forks start without them.
	Volumes []VolumeMount `json:"volumes,omitempty"`
	// Drives are shared drives mounted at create (api/drives.go); more
	// are mounted and unmounted at run time (POST/DELETE .../mounts), and
	// the list is part of the sandbox's state. Forks, snapshots and
	// sandboxes from a generation start without them.
	Drives []DriveMount `json:"drives,omitempty"`
}

// NetworkPolicy is a sandbox's egress policy. Entries are names
// ("api.example.com"), suffixes ("*.example.com"), addresses or CIDRs
// ("192.0.2.0/24"), each optionally ":PORT"; "*" is anything. Deny wins over
// allow; the server's own policy caps both, and private, loopback,
// link-local and metadata ranges stay denied unless the operator allows
// them (warren serve --egress-allow-cidr).
type NetworkPolicy struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// SecretSpec sets one secret: its value goes only to Hosts (names), over
// TLS, in place of the placeholder in headers and the query (and the body
// with Body).
type SecretSpec struct {
	Name  string   `json:"name"`
	Value string   `json:"value"`
	Hosts []string `json:"hosts"`
	Body  bool     `json:"body,omitempty"`
}

// SecretInfo is a secret as the API shows it: never its value.
type SecretInfo struct {
	Name        string   `json:"name"`
	Placeholder string   `json:"placeholder"`
	Hosts       []string `json:"hosts"`
}

// NetworkUpdate is the body of PUT /v1/sandboxes/{id}/network: the new
// policy, applied to the next request, and (when non-nil) the secrets,
// replacing the old ones.
type NetworkUpdate struct {
	Allow   []string     `json:"allow,omitempty"`
	Deny    []string     `json:"deny,omitempty"`
	Secrets []SecretSpec `json:"secrets"` // no omitempty: an empty list (remove all) must survive the hop to a worker
}

// NetworkDecision is one entry of a sandbox's egress audit list.
type NetworkDecision struct {
	Time    time.Time `json:"time"`
	Host    string    `json:"host"`
	Port    int       `json:"port"`
	Addr    string    `json:"addr,omitempty"`
	Allowed bool      `json:"allowed"`
	Reason  string    `json:"reason"`
}

// NetworkStatus is GET /v1/sandboxes/{id}/network: the policy, the
// secrets (names and placeholders), and the last decisions, oldest first
// (Decisions counts all of them; the list is bounded).
type NetworkStatus struct {
	Policy    NetworkPolicy     `json:"policy"`
	Secrets   []SecretInfo      `json:"secrets,omitempty"`
	Audit     []NetworkDecision `json:"audit"`
	Decisions uint64            `json:"decisions"`
}

// NetworkManager is implemented by Services with an egress layer (the
// manager). The server answers 501 on a Service without it.
type NetworkManager interface {
	SetNetwork(ctx context.Context, id string, up NetworkUpdate) (NetworkStatus, error)
	GetNetwork(ctx context.Context, id string) (NetworkStatus, error)
}

// Native-tier confinement levels (CreateRequest.Security).
const (
	SecurityDefault = "default"
	SecurityRelaxed = "relaxed"
)

// CheckSecurity refuses a confinement level that is not one of the above.
func CheckSecurity(s string) error {
	switch s {
	case "", SecurityDefault, SecurityRelaxed:
		return nil
	}
	return Errorf(ErrUnprocessable, "security %q: want %s or %s", s, SecurityDefault, SecurityRelaxed)
}

// Durability levels: how far a write has gone before warren acknowledges
// it (README "Durability"). Each includes the ones before it.
const (
	// DurabilityMemory: the write is in the sandbox's memory; a crash of
	// the node loses it (unless a later write at a higher level or a
	// commit carried it).
	DurabilityMemory = "memory"
	// DurabilityLocal: the write's net change is in the node's write log
	// on local disk, fsynced; a crash of the process (kill -9) or a power
	// loss keeps it, the loss of the node's disk does not.
	DurabilityLocal = "local"
	// DurabilityCommitted: the write is in a committed generation in the
	// blob store, published in the metadata store (the response names the
	// generation); it survives the loss of the node.
	DurabilityCommitted = "committed"
)

// CheckDurability accepts "" (the default) and the three levels.
func CheckDurability(level string) error {
	switch level {
	case "", DurabilityMemory, DurabilityLocal, DurabilityCommitted:
		return nil
	}
	return Errorf(ErrUnprocessable, "bad durability %q (want memory, local or committed)", level)
}

// Ack says how durable a write became: the level reached and, for
// committed, the generation that holds it.
type Ack struct {
	Durability string `json:"durability,omitempty"`
	Generation uint64 `json:"generation,omitempty"`
}

// Sandbox describes one sandbox.
type Sandbox struct {
	ID           string            `json:"id"`
	State        string            `json:"state"`
	Image        string            `json:"image"`
	Labels       map[string]string `json:"labels,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Cwd          string            `json:"cwd"`
	User         string            `json:"user"`
	Hostname     string            `json:"hostname"`
	Limits       Limits            `json:"limits"`
	StandbyAfter Duration          `json:"standby_after"`
	TTL          Duration          `json:"ttl,omitempty"`
	CreatedAt    time.Time         `json:"created_at"`
	LastActive   time.Time         `json:"last_active"`
	// StateRef names the hibernated state (set in standby).
	StateRef string   `json:"state_ref,omitempty"`
	Parent   string   `json:"parent,omitempty"`   // the sandbox this one was forked from
	Snapshot string   `json:"snapshot,omitempty"` // the snapshot it was created from
	Sessions []string `json:"sessions,omitempty"`
	// Volumes are the volumes attached at create (api/volumes.go).
	Volumes []VolumeMount `json:"volumes,omitempty"`
	// Drives are the shared drives mounted in it (api/drives.go).
	Drives []DriveMount `json:"drives,omitempty"`
	// DiskBytes and DiskInodes are the delta's usage (known when running).
	DiskBytes  int64 `json:"disk_bytes"`
	DiskInodes int64 `json:"disk_inodes"`
	// Durability is the sandbox's own default ack level ("" = the
	// server's).
	Durability string `json:"durability,omitempty"`
	// Security is the native tier's confinement (SecurityDefault or
	// SecurityRelaxed).
	Security string `json:"security"`
	// Network is the egress policy (absent: no network).
	Network *NetworkPolicy `json:"network,omitempty"`
	// Commands is the commands policy in its canonical form
	// ("resident-first", "native-first,git=resident").
	Commands string `json:"commands"`
	// Node and Epoch name the node that holds the sandbox and its owner
	// epoch (a fleet, docs/fleet.md; empty while nobody has claimed it).
	Node  string `json:"node,omitempty"`
	Epoch uint64 `json:"epoch,omitempty"`
}

// ListOptions filter GET /v1/sandboxes; every label must match.
type ListOptions struct {
	Labels map[string]string `json:"labels,omitempty"`
}

// ExecRequest is the body of POST /v1/sandboxes/{id}/exec and of
// POST .../processes. Exactly one of Script and Argv is set.
type ExecRequest struct {
	Script string   `json:"script,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	// Session names the shell session (default "main"); execs in one
	// session run one at a time, in different sessions in parallel.
	Session string `json:"session,omitempty"`
	// Isolated runs the exec in a throwaway copy of the session: its
	// filesystem writes stay, its shell state changes do not.
	Isolated bool `json:"isolated,omitempty"`
	// Stdin is the exec's standard input (text); StdinReader, in process
	// only, streams it.
	Stdin       string    `json:"stdin,omitempty"`
	StdinReader io.Reader `json:"-"`
	// Env and Cwd apply to this exec only (it then runs in a subshell, so
	// its shell-state changes do not persist).
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	Timeout Duration          `json:"timeout,omitempty"`
	// MaxOutputBytes lowers the sandbox's output limit for this exec
	// (0: the sandbox's; a larger value does not raise it).
	MaxOutputBytes int64 `json:"max_output_bytes,omitempty"`
	// Durability is the ack level this exec waits for (memory, local or
	// committed; "" = the sandbox's default).
	Durability string `json:"durability,omitempty"`
	// Commands is this exec's commands policy over the sandbox's: one
	// that names a mode replaces the sandbox's policy, NAME=WHERE items
	// alone add to its overrides.
	Commands string `json:"commands,omitempty"`
	// PTY (POST .../processes only) runs the process on a terminal of
	// this size: without a script or argv, an interactive shell. Timeout
	// then bounds each command line (at most 24h; default the sandbox's
	// exec timeout), so an editor or a REPL may run longer than an exec.
	PTY *PTYSize `json:"pty,omitempty"`
}

// ExecResult is the outcome of an exec. Stdout and Stderr are filled only
// by buffered execs.
type ExecResult struct {
	Exit       int     `json:"exit"`
	Stdout     string  `json:"stdout,omitempty"`
	Stderr     string  `json:"stderr,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	// CPUSeconds is the CPU time of the exec's native processes (from
	// their cgroup); resident commands add nothing.
	CPUSeconds float64 `json:"cpu_seconds"`
	// Limit names the limit that stopped the exec ("timeout", "output",
	// "memory": a native process was killed over the memory limit), or
	// the signal that killed it ("signal:TERM").
	Limit string `json:"limit,omitempty"`
	// Truncated: output beyond the limit (or the attach replay bound) was dropped.
	Truncated bool `json:"truncated,omitempty"`
	// Durability is the level the exec's writes reached before the reply;
	// Generation the committed generation holding them (committed only).
	Durability string `json:"durability,omitempty"`
	Generation uint64 `json:"generation,omitempty"`
	// Rungs counts the exec's commands by where they ran (resident,
	// wasm, native; missing: not found or refused with no other rung);
	// builtins and functions are not counted. Fallbacks counts, by
	// command name, the resident refusals run on another rung.
	Rungs     map[string]int64 `json:"rungs,omitempty"`
	Fallbacks map[string]int64 `json:"fallbacks,omitempty"`
}

// ExecEvent is one line of a streamed exec (NDJSON): exactly one of
// Stdout/Stderr (text), StdoutB64/StderrB64 (output that is not UTF-8),
// Exit (the last event, with the result's other fields) or Error.
type ExecEvent struct {
	Stdout     *string `json:"stdout,omitempty"`
	Stderr     *string `json:"stderr,omitempty"`
	StdoutB64  []byte  `json:"stdout_b64,omitempty"`
	StderrB64  []byte  `json:"stderr_b64,omitempty"`
	Exit       *int    `json:"exit,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
	Limit      string  `json:"limit,omitempty"`
	Truncated  bool    `json:"truncated,omitempty"`
	Durability string  `json:"durability,omitempty"`
	Generation uint64  `json:"generation,omitempty"`
	// Rungs and Fallbacks are ExecResult's, on the exit event.
	Rungs     map[string]int64 `json:"rungs,omitempty"`
	Fallbacks map[string]int64 `json:"fallbacks,omitempty"`
	Error     *ErrorDetail     `json:"error,omitempty"`
}

// Process is a background exec.
type Process struct {
	PID       int         `json:"pid"`
	Session   string      `json:"session"`
	Command   string      `json:"command"`
	Running   bool        `json:"running"`
	StartedAt time.Time   `json:"started_at"`
	Result    *ExecResult `json:"result,omitempty"` // set once it exited
	PTY       *PTYSize    `json:"pty,omitempty"`    // its terminal's size, if it has one
	// Job is set for a background job a script started (`cmd &`): its
	// number in its shell (%N) and its pid there ($!). Its output is its
	// log (logs/attach); it has no stdin.
	Job      int `json:"job,omitempty"`
	ShellPID int `json:"shell_pid,omitempty"`
}

// SignalRequest is the body of POST .../processes/{pid}/signal.
type SignalRequest struct {
	Signal string `json:"signal"` // TERM, KILL, INT, HUP (with or without SIG)
}

// FileInfo describes one file of a sandbox.
type FileInfo struct {
	Path    string    `json:"path"`
	Name    string    `json:"name"`
	Type    string    `json:"type"` // file, dir, symlink, other
	Size    int64     `json:"size"`
	Mode    string    `json:"mode"` // octal permission bits, e.g. "0644"
	ModTime time.Time `json:"mod_time"`
	Target  string    `json:"target,omitempty"` // symlink target
}

// Write modes for WriteFile.
const (
	WriteTruncate = "truncate" // create or replace (default)
	WriteAppend   = "append"   // create or append
	WriteCreate   = "create"   // create; fail if it exists
)

// WriteFileRequest describes one file write; Data is its content.
type WriteFileRequest struct {
	Path string
	Data io.Reader
	Mode string // WriteTruncate, WriteAppend or WriteCreate
	Perm uint32 // permission bits of a new file (default 0644)
	// Durability is the ack level to wait for ("" = the sandbox's).
	Durability string
	// Ack, if set, receives the level reached (HTTP: the
	// Warren-Durability and Warren-Generation response headers).
	Ack *Ack
}

// ListFilesOptions: Depth 0 means the directory's entries only, unless
// Recursive, which means unlimited depth; Depth N means N levels below.
type ListFilesOptions struct {
	Recursive bool
	Depth     int
}

// MkdirRequest is the body of POST .../files/mkdir (always -p).
type MkdirRequest struct {
	Path string `json:"path"`
	Perm uint32 `json:"perm,omitempty"`
}

// MoveRequest is the body of POST .../files/move.
type MoveRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ForkRequest is the body of POST .../fork.
type ForkRequest struct {
	Count int `json:"count,omitempty"` // default 1
	// Labels are set on the children over the parent's (which they keep).
	Labels map[string]string `json:"labels,omitempty"`
}

// ForkResult lists the children.
type ForkResult struct {
	Sandboxes []Sandbox `json:"sandboxes"`
}

// SnapshotRequest is the body of POST .../snapshots.
type SnapshotRequest struct {
	Name string `json:"name"`
}

// Snapshot is a named, immutable sandbox state.
type Snapshot struct {
	Name      string    `json:"name"`
	Sandbox   string    `json:"sandbox"`
	Image     string    `json:"image"`
	StateRef  string    `json:"state_ref"`
	CreatedAt time.Time `json:"created_at"`
}

// Image is a base image a sandbox may start from.
type Image struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
	Size   int64  `json:"size,omitempty"`
	// Shared images are the node's (built or pulled by its operator):
	// every tenant may start from them, none may change them.
	Shared bool `json:"shared,omitempty"`
}

// ImageBuildOptions tune POST /v1/images.
type ImageBuildOptions struct {
	// Dockerfile is the Dockerfile's path inside the tar; "" builds the
	// tar's root Dockerfile if it has one, else the tar's files as they are.
	Dockerfile string
	BuildArgs  map[string]string
}

// KeyRequest is the body of POST /v1/keys (admin only).
type KeyRequest struct {
	Tenant string `json:"tenant"`
}

// Key is a new API key for a tenant; the key is shown only once.
type Key struct {
	Tenant string `json:"tenant"`
	Key    string `json:"key"`
}

// Service is what warren does for one tenant. The sandbox manager
// implements it in process and the client over HTTP; one behaviour suite
// (sandbox/sandboxtest) runs against both.
type Service interface {
	Create(ctx context.Context, req CreateRequest) (Sandbox, error)
	Get(ctx context.Context, id string) (Sandbox, error)
	List(ctx context.Context, opts ListOptions) ([]Sandbox, error)
	Delete(ctx context.Context, id string) error

	// Exec runs req and streams its output to stdout and stderr (either
	// may be nil) as it is produced.
	Exec(ctx context.Context, id string, req ExecRequest, stdout, stderr io.Writer) (ExecResult, error)

	StartProcess(ctx context.Context, id string, req ExecRequest) (Process, error)
	ListProcesses(ctx context.Context, id string) ([]Process, error)
	// AttachProcess replays the buffered output (within a bound) then
	// streams the rest until the process exits.
	AttachProcess(ctx context.Context, id string, pid int, stdout, stderr io.Writer) (ExecResult, error)
	WriteStdin(ctx context.Context, id string, pid int, data []byte, closeStdin bool) error
	SignalProcess(ctx context.Context, id string, pid int, signal string) error
	WaitProcess(ctx context.Context, id string, pid int) (ExecResult, error)

	ReadFile(ctx context.Context, id, path string, offset, length int64) ([]byte, error)
	WriteFile(ctx context.Context, id string, req WriteFileRequest) error
	ListFiles(ctx context.Context, id, path string, opts ListFilesOptions) ([]FileInfo, error)
	Stat(ctx context.Context, id, path string) (FileInfo, error)
	Mkdir(ctx context.Context, id, path string, perm uint32) error
	Move(ctx context.Context, id, from, to string) error
	Remove(ctx context.Context, id, path string, recursive bool) error
	UploadTar(ctx context.Context, id, dir string, tar io.Reader) error
	DownloadTar(ctx context.Context, id, dir string, w io.Writer) error

	Hibernate(ctx context.Context, id string) (Sandbox, error)
	Resume(ctx context.Context, id string) (Sandbox, error)
	Fork(ctx context.Context, id string, count int) ([]Sandbox, error)
	// ForkWith forks with req's options (Fork is ForkWith with only Count).
	ForkWith(ctx context.Context, id string, req ForkRequest) ([]Sandbox, error)

	CreateSnapshot(ctx context.Context, id, name string) (Snapshot, error)
	ListSnapshots(ctx context.Context) ([]Snapshot, error)
	GetSnapshot(ctx context.Context, name string) (Snapshot, error)
	DeleteSnapshot(ctx context.Context, name string) error

	ListImages(ctx context.Context) ([]Image, error)
	// BuildImage makes an image of a tar stream, named for this tenant.
	BuildImage(ctx context.Context, name string, tar io.Reader) (Image, error)
}

// ImageManager is implemented by Services that also build with options
// and remove images (the manager and the client). The server answers 501
// for those requests on a Service without it.
type ImageManager interface {
	// BuildImageWith is BuildImage with a named Dockerfile and ARG values.
	BuildImageWith(ctx context.Context, name string, tar io.Reader, opts ImageBuildOptions) (Image, error)
	// DeleteImage removes one of this tenant's images.
	DeleteImage(ctx context.Context, name string) error
}
