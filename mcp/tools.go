// Package mcp serves warren's sandboxes as Model Context Protocol tools, on
// the official Go SDK. It talks to any api.Service (the in-process manager
// for one tenant, or the HTTP client), so the same tools work over stdio
// (`warren mcp`) and over streamable HTTP at /v1/mcp behind the API's key
// auth (package server mounts it, one tenant-bound Service per request).
//
// Tool arguments use the API's names (sandbox_id, script, path, content,
// old_string, new_string); results are structured content with the same
// fields as text. A non-zero exit status is a result, not an error; an API
// error (not found, limit, bad input) is a tool error whose text names it.
//
// Left out: file watch and PTYs (an agent drives them through the HTTP API
// or the SDKs), image builds (an operator's job, not an agent's).
package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/warren-sandbox/warren/api"
)

// Options configure the tool server.
type Options struct {
	// Sandbox pins every tool to this sandbox: sandbox_id is dropped from
	// the schemas, and the sandbox lifecycle tools that pick another
	// sandbox (create, list, delete) are not offered.
	Sandbox string
	// Version is reported to clients (default "dev").
	Version string
	// MaxOutputBytes bounds what one tool result carries of stdout and of
	// stderr each (default 256 KiB): an LLM's context is the real limit,
	// and the sandbox keeps the rest in its files.
	MaxOutputBytes int
	// MaxReadBytes bounds one file_read (default 1 MiB).
	MaxReadBytes int64
}

// NewServer returns an MCP server whose tools act on svc.
func NewServer(svc api.Service, opts Options) *sdk.Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = 256 << 10
	}
	if opts.MaxReadBytes <= 0 {
		opts.MaxReadBytes = 1 << 20
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "warren", Version: opts.Version}, &sdk.ServerOptions{
		SchemaCache: schemas,
		Instructions: "warren sandboxes: a bash shell with coreutils, git, jq, awk, sed and a persistent filesystem. " +
			"Use exec to run commands; files persist across execs, hibernate and resume.",
	})
	t := &tools{svc: svc, opts: opts}
	t.register(s)
	return s
}

// schemas caches the tools' inferred JSON schemas: the HTTP handler builds
// a server per request (each bound to the caller's tenant).
var schemas = sdk.NewSchemaCache()

// Handler serves the tools over streamable HTTP for the Service that
// svcFor returns for a request (nil: the request is refused with 401 by the
// caller before it gets here). It is stateless: every POST is a session of
// its own, so a session id can never carry one tenant's calls into
// another's Service.
func Handler(svcFor func(*http.Request) api.Service, opts Options) http.Handler {
	return sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		svc := svcFor(r)
		if svc == nil {
			return nil
		}
		return NewServer(svc, opts)
	}, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: 8 << 20})
}

type tools struct {
	svc  api.Service
	opts Options
}

// id returns the sandbox a call acts on: the pinned one, else its argument.
func (t *tools) id(arg string) (string, error) {
	if t.opts.Sandbox != "" {
		return t.opts.Sandbox, nil
	}
	if arg == "" {
		return "", errors.New("sandbox_id is required")
	}
	return arg, nil
}

// add registers a tool whose input struct embeds SandboxArg; when pinned,
// sandbox_id leaves the schema (the SDK validates arguments against it, so
// the model never sees or sends it).
func add[In, Out any](t *tools, s *sdk.Server, tool *sdk.Tool, h func(context.Context, In) (Out, error)) {
	if t.opts.Sandbox != "" {
		schema, err := jsonschema.For[In](nil)
		if err != nil {
			panic(fmt.Sprintf("mcp: schema of %s: %v", tool.Name, err))
		}
		delete(schema.Properties, "sandbox_id")
		req := schema.Required[:0]
		for _, r := range schema.Required {
			if r != "sandbox_id" {
				req = append(req, r)
			}
		}
		schema.Required = req
		tool.InputSchema = schema
	}
	sdk.AddTool(s, tool, func(ctx context.Context, _ *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		out, err := h(ctx, in)
		return nil, out, err
	})
}

// SandboxArg is the sandbox a tool acts on.
type SandboxArg struct {
	SandboxID string `json:"sandbox_id" jsonschema:"the sandbox to act on (from sandbox_create or sandbox_list)"`
}

// SandboxInfo is what the tools say of a sandbox.
type SandboxInfo struct {
	SandboxID string            `json:"sandbox_id"`
	State     string            `json:"state"`
	Image     string            `json:"image"`
	Cwd       string            `json:"cwd"`
	Labels    map[string]string `json:"labels,omitempty"`
	Parent    string            `json:"parent,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

func info(sb api.Sandbox) SandboxInfo {
	return SandboxInfo{SandboxID: sb.ID, State: sb.State, Image: sb.Image, Cwd: sb.Cwd, Labels: sb.Labels, Parent: sb.Parent, CreatedAt: sb.CreatedAt}
}

type CreateIn struct {
	Image    string            `json:"image,omitempty" jsonschema:"image name or digest (default: the built-in image)"`
	Snapshot string            `json:"snapshot,omitempty" jsonschema:"start from this snapshot instead of an image"`
	Env      map[string]string `json:"env,omitempty" jsonschema:"environment variables of the sandbox"`
	Cwd      string            `json:"cwd,omitempty" jsonschema:"working directory (default: the image's)"`
	Labels   map[string]string `json:"labels,omitempty" jsonschema:"labels to find the sandbox by later"`
}

type ListIn struct {
	Labels map[string]string `json:"labels,omitempty" jsonschema:"only sandboxes with all of these labels"`
}

type ListOut struct {
	Sandboxes []SandboxInfo `json:"sandboxes"`
}

type Empty struct{}

type OK struct {
	OK bool `json:"ok"`
}

type ExecIn struct {
	SandboxArg
	Script    string            `json:"script" jsonschema:"bash script to run"`
	Session   string            `json:"session,omitempty" jsonschema:"shell session (default main); variables, cwd and functions persist per session"`
	Cwd       string            `json:"cwd,omitempty" jsonschema:"run in this directory (this exec only)"`
	Env       map[string]string `json:"env,omitempty" jsonschema:"extra environment (this exec only)"`
	TimeoutMS int64             `json:"timeout_ms,omitempty" jsonschema:"time limit in milliseconds (default: the sandbox's)"`
	Stdin     string            `json:"stdin,omitempty" jsonschema:"standard input"`
}

// ExecOut is an exec's outcome. Output that is not UTF-8 is given with
// invalid bytes replaced; *_truncated says the tool result was cut (the
// sandbox's own output limit is named by limit).
type ExecOut struct {
	ExitCode        int     `json:"exit_code"`
	Stdout          string  `json:"stdout"`
	Stderr          string  `json:"stderr"`
	StdoutTruncated bool    `json:"stdout_truncated,omitempty"`
	StderrTruncated bool    `json:"stderr_truncated,omitempty"`
	Limit           string  `json:"limit,omitempty"`
	DurationMS      float64 `json:"duration_ms"`
}

type ProcessStartIn struct {
	SandboxArg
	Script  string            `json:"script" jsonschema:"bash script to run in the background"`
	Session string            `json:"session,omitempty" jsonschema:"shell session"`
	Cwd     string            `json:"cwd,omitempty" jsonschema:"working directory"`
	Env     map[string]string `json:"env,omitempty" jsonschema:"extra environment"`
}

type ProcessOut struct {
	PID     int      `json:"pid"`
	Running bool     `json:"running"`
	Result  *ExecOut `json:"result,omitempty"`
}

type ProcessOutputIn struct {
	SandboxArg
	PID    int   `json:"pid" jsonschema:"process id from process_start"`
	WaitMS int64 `json:"wait_ms,omitempty" jsonschema:"wait up to this long for the process to exit (default 0: return what it printed so far)"`
}

type ProcessOutputOut struct {
	PID     int  `json:"pid"`
	Running bool `json:"running"`
	ExecOut
}

type ProcessStdinIn struct {
	SandboxArg
	PID   int    `json:"pid" jsonschema:"process id"`
	Data  string `json:"data,omitempty" jsonschema:"text to write to the process's stdin"`
	Close bool   `json:"close,omitempty" jsonschema:"close stdin after writing"`
}

type ProcessSignalIn struct {
	SandboxArg
	PID    int    `json:"pid" jsonschema:"process id"`
	Signal string `json:"signal,omitempty" jsonschema:"TERM (default), KILL, INT or HUP"`
}

type FileReadIn struct {
	SandboxArg
	Path   string `json:"path" jsonschema:"absolute path, or relative to the sandbox's cwd"`
	Offset int64  `json:"offset,omitempty" jsonschema:"first byte to read"`
	Length int64  `json:"length,omitempty" jsonschema:"bytes to read (default: to the end, up to the tool's limit)"`
}

type FileReadOut struct {
	Path string `json:"path"`
	// Encoding is utf8, or base64 when the bytes are not text.
	Encoding  string `json:"encoding"`
	Content   string `json:"content"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated,omitempty"`
}

type FileWriteIn struct {
	SandboxArg
	Path     string `json:"path" jsonschema:"file to write; parent directories are created"`
	Content  string `json:"content" jsonschema:"the file's content"`
	Encoding string `json:"encoding,omitempty" jsonschema:"utf8 (default) or base64"`
	Append   bool   `json:"append,omitempty" jsonschema:"append instead of replacing"`
}

type FileEditIn struct {
	SandboxArg
	Path       string `json:"path" jsonschema:"file to edit"`
	OldString  string `json:"old_string" jsonschema:"exact text to replace; must occur exactly once unless replace_all"`
	NewString  string `json:"new_string" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
}

type FileEditOut struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
}

type FileListIn struct {
	SandboxArg
	Path      string `json:"path" jsonschema:"directory to list"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"list the whole tree"`
	Depth     int    `json:"depth,omitempty" jsonschema:"levels below path to list (0: entries only)"`
}

type FileListOut struct {
	Files []api.FileInfo `json:"files"`
}

type FileMoveIn struct {
	SandboxArg
	From string `json:"from" jsonschema:"existing path"`
	To   string `json:"to" jsonschema:"new path"`
}

type FileDeleteIn struct {
	SandboxArg
	Path      string `json:"path" jsonschema:"path to delete"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"delete a directory and everything in it"`
}

type MkdirIn struct {
	SandboxArg
	Path string `json:"path" jsonschema:"directory to create, with its parents"`
}

type ForkIn struct {
	SandboxArg
	Count int `json:"count,omitempty" jsonschema:"how many copies (default 1)"`
}

type SnapshotIn struct {
	SandboxArg
	Name string `json:"name" jsonschema:"snapshot name, unique per tenant"`
}

type SnapshotOut struct {
	Name      string    `json:"name"`
	SandboxID string    `json:"sandbox_id"`
	CreatedAt time.Time `json:"created_at"`
}

func (t *tools) register(s *sdk.Server) {
	if t.opts.Sandbox == "" {
		add(t, s, &sdk.Tool{Name: "sandbox_create", Description: "Create a sandbox (a bash shell over a persistent filesystem) and return its id."}, t.create)
		add(t, s, &sdk.Tool{Name: "sandbox_list", Description: "List your sandboxes, optionally by labels."}, t.list)
		add(t, s, &sdk.Tool{Name: "sandbox_delete", Description: "Delete a sandbox and its files."}, t.delete)
	}
	add(t, s, &sdk.Tool{Name: "exec", Description: "Run a bash script in the sandbox and wait for it. Returns exit_code, stdout and stderr; a non-zero exit_code is a normal result."}, t.exec)
	add(t, s, &sdk.Tool{Name: "process_start", Description: "Start a bash script in the background (a server, a long build); returns its pid."}, t.processStart)
	add(t, s, &sdk.Tool{Name: "process_output", Description: "Output of a background process so far, and its exit_code once it exited."}, t.processOutput)
	add(t, s, &sdk.Tool{Name: "process_stdin", Description: "Write to a background process's standard input."}, t.processStdin)
	add(t, s, &sdk.Tool{Name: "process_signal", Description: "Send a signal to a background process."}, t.processSignal)
	add(t, s, &sdk.Tool{Name: "file_read", Description: "Read a file (or a byte range of it)."}, t.fileRead)
	add(t, s, &sdk.Tool{Name: "file_write", Description: "Create or replace a file with the given content."}, t.fileWrite)
	add(t, s, &sdk.Tool{Name: "file_edit", Description: "Replace old_string with new_string in a file. Fails unless old_string occurs exactly once (or replace_all is set)."}, t.fileEdit)
	add(t, s, &sdk.Tool{Name: "file_list", Description: "List a directory."}, t.fileList)
	add(t, s, &sdk.Tool{Name: "file_move", Description: "Move or rename a file or directory."}, t.fileMove)
	add(t, s, &sdk.Tool{Name: "file_delete", Description: "Delete a file, or a directory with recursive."}, t.fileDelete)
	add(t, s, &sdk.Tool{Name: "mkdir", Description: "Create a directory and its parents."}, t.mkdir)
	add(t, s, &sdk.Tool{Name: "hibernate", Description: "Hibernate the sandbox: its state is kept, it uses no memory until the next call."}, t.hibernate)
	add(t, s, &sdk.Tool{Name: "resume", Description: "Resume a hibernated sandbox (any call resumes it too)."}, t.resume)
	add(t, s, &sdk.Tool{Name: "fork", Description: "Copy the sandbox (files and shell state) into new sandboxes; returns their ids."}, t.fork)
	add(t, s, &sdk.Tool{Name: "snapshot", Description: "Save the sandbox's state under a name; sandbox_create can start from it."}, t.snapshot)
}

func (t *tools) create(ctx context.Context, in CreateIn) (SandboxInfo, error) {
	sb, err := t.svc.Create(ctx, api.CreateRequest{Image: in.Image, Snapshot: in.Snapshot, Env: in.Env, Cwd: in.Cwd, Labels: in.Labels})
	return info(sb), err
}

func (t *tools) list(ctx context.Context, in ListIn) (ListOut, error) {
	sbs, err := t.svc.List(ctx, api.ListOptions{Labels: in.Labels})
	out := ListOut{Sandboxes: []SandboxInfo{}}
	for _, sb := range sbs {
		out.Sandboxes = append(out.Sandboxes, info(sb))
	}
	return out, err
}

func (t *tools) delete(ctx context.Context, in SandboxArg) (OK, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return OK{}, err
	}
	return OK{true}, t.svc.Delete(ctx, id)
}

// capped keeps the first max bytes written and counts the rest.
type capped struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.truncated = true
		p = p[:max(room, 0)]
	}
	c.buf.Write(p)
	return len(p), nil
}

// text gives the bytes as valid UTF-8 for JSON.
func (c *capped) text() string { return strings.ToValidUTF8(c.buf.String(), "\uFFFD") }

func (t *tools) run(ctx context.Context, id string, req api.ExecRequest) (ExecOut, error) {
	stdout, stderr := &capped{max: t.opts.MaxOutputBytes}, &capped{max: t.opts.MaxOutputBytes}
	res, err := t.svc.Exec(ctx, id, req, stdout, stderr)
	if err != nil {
		return ExecOut{}, err
	}
	return ExecOut{
		ExitCode: res.Exit, Stdout: stdout.text(), Stderr: stderr.text(),
		StdoutTruncated: stdout.truncated || res.Truncated, StderrTruncated: stderr.truncated,
		Limit: res.Limit, DurationMS: res.DurationMS,
	}, nil
}

func (t *tools) exec(ctx context.Context, in ExecIn) (ExecOut, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return ExecOut{}, err
	}
	if in.Script == "" {
		return ExecOut{}, errors.New("script is required")
	}
	if in.TimeoutMS < 0 {
		return ExecOut{}, errors.New("timeout_ms must not be negative")
	}
	return t.run(ctx, id, api.ExecRequest{
		Script: in.Script, Session: in.Session, Cwd: in.Cwd, Env: in.Env, Stdin: in.Stdin,
		Timeout: api.Duration(time.Duration(in.TimeoutMS) * time.Millisecond),
	})
}

func (t *tools) processStart(ctx context.Context, in ProcessStartIn) (ProcessOut, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return ProcessOut{}, err
	}
	if in.Script == "" {
		return ProcessOut{}, errors.New("script is required")
	}
	p, err := t.svc.StartProcess(ctx, id, api.ExecRequest{Script: in.Script, Session: in.Session, Cwd: in.Cwd, Env: in.Env})
	return ProcessOut{PID: p.PID, Running: p.Running}, err
}

// processOutput attaches for at most wait_ms: the replay of what the
// process printed comes first, then live output until it exits or the
// wait ends (a running process is not an error).
func (t *tools) processOutput(ctx context.Context, in ProcessOutputIn) (ProcessOutputOut, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return ProcessOutputOut{}, err
	}
	procs, err := t.svc.ListProcesses(ctx, id)
	if err != nil {
		return ProcessOutputOut{}, err
	}
	running, found := false, false
	for _, p := range procs {
		if p.PID == in.PID {
			found, running = true, p.Running
		}
	}
	if !found {
		return ProcessOutputOut{}, fmt.Errorf("no process %d in sandbox %s", in.PID, id)
	}
	wait := time.Duration(in.WaitMS) * time.Millisecond
	if running && wait <= 0 {
		wait = 50 * time.Millisecond // long enough to take the replay
	}
	actx := ctx
	if running {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	stdout, stderr := &capped{max: t.opts.MaxOutputBytes}, &capped{max: t.opts.MaxOutputBytes}
	res, err := t.svc.AttachProcess(actx, id, in.PID, stdout, stderr)
	out := ProcessOutputOut{PID: in.PID, ExecOut: ExecOut{Stdout: stdout.text(), Stderr: stderr.text(),
		StdoutTruncated: stdout.truncated, StderrTruncated: stderr.truncated}}
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			out.Running = true
			return out, nil
		}
		return ProcessOutputOut{}, err
	}
	out.ExitCode, out.Limit, out.DurationMS = res.Exit, res.Limit, res.DurationMS
	out.StdoutTruncated = out.StdoutTruncated || res.Truncated
	return out, nil
}

func (t *tools) processStdin(ctx context.Context, in ProcessStdinIn) (OK, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return OK{}, err
	}
	return OK{true}, t.svc.WriteStdin(ctx, id, in.PID, []byte(in.Data), in.Close)
}

func (t *tools) processSignal(ctx context.Context, in ProcessSignalIn) (OK, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return OK{}, err
	}
	sig := in.Signal
	if sig == "" {
		sig = "TERM"
	}
	return OK{true}, t.svc.SignalProcess(ctx, id, in.PID, sig)
}

func (t *tools) fileRead(ctx context.Context, in FileReadIn) (FileReadOut, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return FileReadOut{}, err
	}
	if in.Offset < 0 || in.Length < 0 {
		return FileReadOut{}, errors.New("offset and length must not be negative")
	}
	st, err := t.svc.Stat(ctx, id, in.Path)
	if err != nil {
		return FileReadOut{}, err
	}
	if st.Type == "dir" {
		return FileReadOut{}, fmt.Errorf("%s is a directory (use file_list)", in.Path)
	}
	length, truncated := in.Length, false
	if length == 0 {
		length = max(st.Size-in.Offset, 0)
	}
	if length > t.opts.MaxReadBytes {
		length, truncated = t.opts.MaxReadBytes, true
	}
	data, err := t.svc.ReadFile(ctx, id, in.Path, in.Offset, length)
	if err != nil {
		return FileReadOut{}, err
	}
	out := FileReadOut{Path: st.Path, Encoding: "utf8", Content: string(data), Size: st.Size, Truncated: truncated}
	if !utf8.Valid(data) {
		out.Encoding, out.Content = "base64", base64.StdEncoding.EncodeToString(data)
	}
	return out, nil
}

func decodeContent(content, encoding string) ([]byte, error) {
	switch encoding {
	case "", "utf8", "utf-8":
		return []byte(content), nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			return nil, fmt.Errorf("content is not valid base64: %w", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown encoding %q (want utf8 or base64)", encoding)
}

func (t *tools) fileWrite(ctx context.Context, in FileWriteIn) (OK, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return OK{}, err
	}
	data, err := decodeContent(in.Content, in.Encoding)
	if err != nil {
		return OK{}, err
	}
	mode := api.WriteTruncate
	if in.Append {
		mode = api.WriteAppend
	}
	return OK{true}, t.svc.WriteFile(ctx, id, api.WriteFileRequest{Path: in.Path, Data: bytes.NewReader(data), Mode: mode})
}

// fileEdit is the string replacement editors for agents offer: the match
// must be unique so that the model cannot edit the wrong place.
func (t *tools) fileEdit(ctx context.Context, in FileEditIn) (FileEditOut, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return FileEditOut{}, err
	}
	if in.OldString == "" {
		return FileEditOut{}, errors.New("old_string must not be empty")
	}
	if in.OldString == in.NewString {
		return FileEditOut{}, errors.New("old_string and new_string are the same")
	}
	st, err := t.svc.Stat(ctx, id, in.Path)
	if err != nil {
		return FileEditOut{}, err
	}
	if st.Type != "file" {
		return FileEditOut{}, fmt.Errorf("%s is not a regular file", in.Path)
	}
	data, err := t.svc.ReadFile(ctx, id, in.Path, 0, st.Size)
	if err != nil {
		return FileEditOut{}, err
	}
	n := bytes.Count(data, []byte(in.OldString))
	switch {
	case n == 0:
		return FileEditOut{}, fmt.Errorf("old_string not found in %s", in.Path)
	case n > 1 && !in.ReplaceAll:
		return FileEditOut{}, fmt.Errorf("old_string occurs %d times in %s: add context to make it unique, or set replace_all", n, in.Path)
	}
	limit := 1
	if in.ReplaceAll {
		limit = -1
	}
	edited := bytes.Replace(data, []byte(in.OldString), []byte(in.NewString), limit)
	perm, _ := parseMode(st.Mode)
	if err := t.svc.WriteFile(ctx, id, api.WriteFileRequest{Path: in.Path, Data: bytes.NewReader(edited), Mode: api.WriteTruncate, Perm: perm}); err != nil {
		return FileEditOut{}, err
	}
	if !in.ReplaceAll {
		n = 1
	}
	return FileEditOut{Path: st.Path, Replacements: n}, nil
}

func parseMode(s string) (uint32, error) {
	var m uint32
	_, err := fmt.Sscanf(s, "%o", &m)
	return m, err
}

func (t *tools) fileList(ctx context.Context, in FileListIn) (FileListOut, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return FileListOut{}, err
	}
	if in.Depth < 0 {
		return FileListOut{}, errors.New("depth must not be negative")
	}
	fis, err := t.svc.ListFiles(ctx, id, in.Path, api.ListFilesOptions{Recursive: in.Recursive, Depth: in.Depth})
	if fis == nil {
		fis = []api.FileInfo{}
	}
	return FileListOut{Files: fis}, err
}

func (t *tools) fileMove(ctx context.Context, in FileMoveIn) (OK, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return OK{}, err
	}
	return OK{true}, t.svc.Move(ctx, id, in.From, in.To)
}

func (t *tools) fileDelete(ctx context.Context, in FileDeleteIn) (OK, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return OK{}, err
	}
	return OK{true}, t.svc.Remove(ctx, id, in.Path, in.Recursive)
}

func (t *tools) mkdir(ctx context.Context, in MkdirIn) (OK, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return OK{}, err
	}
	return OK{true}, t.svc.Mkdir(ctx, id, in.Path, 0o755)
}

func (t *tools) hibernate(ctx context.Context, in SandboxArg) (SandboxInfo, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return SandboxInfo{}, err
	}
	sb, err := t.svc.Hibernate(ctx, id)
	return info(sb), err
}

func (t *tools) resume(ctx context.Context, in SandboxArg) (SandboxInfo, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return SandboxInfo{}, err
	}
	sb, err := t.svc.Resume(ctx, id)
	return info(sb), err
}

func (t *tools) fork(ctx context.Context, in ForkIn) (ListOut, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return ListOut{}, err
	}
	count := in.Count
	if count == 0 {
		count = 1
	}
	sbs, err := t.svc.Fork(ctx, id, count)
	out := ListOut{Sandboxes: []SandboxInfo{}}
	for _, sb := range sbs {
		out.Sandboxes = append(out.Sandboxes, info(sb))
	}
	return out, err
}

func (t *tools) snapshot(ctx context.Context, in SnapshotIn) (SnapshotOut, error) {
	id, err := t.id(in.SandboxID)
	if err != nil {
		return SnapshotOut{}, err
	}
	s, err := t.svc.CreateSnapshot(ctx, id, in.Name)
	return SnapshotOut{Name: s.Name, SandboxID: s.Sandbox, CreatedAt: s.CreatedAt}, err
}

var _ io.Writer = (*capped)(nil)
