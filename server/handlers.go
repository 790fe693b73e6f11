package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request, _ api.Service) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

var tenantRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func (s *Server) createKey(w http.ResponseWriter, r *http.Request, _ api.Service) error {
	var req api.KeyRequest
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	if !tenantRE.MatchString(req.Tenant) {
		return api.Errorf(api.ErrUnprocessable, "bad tenant name %q: want 1-64 of [A-Za-z0-9._-]", req.Tenant)
	}
	key := NewKey()
	if err := s.cfg.Keys.PutKey(r.Context(), key, req.Tenant, false); err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, api.Key{Tenant: req.Tenant, Key: key})
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	var req api.CreateRequest
	if err := s.decode(w, r, &req, true); err != nil {
		return err
	}
	if len(req.Volumes) > 0 {
		if _, err := volumeService(svc); err != nil { // volumes.go
			return err
		}
	}
	sb, err := svc.Create(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, sb)
}

// labelFilter parses label=k=v (repeatable) query parameters.
func labelFilter(r *http.Request) (map[string]string, error) {
	q := r.URL.Query()
	out := map[string]string{}
	for k, vs := range q {
		if k != "label" {
			return nil, api.Errorf(errdefs.ErrInvalidArgument, "unknown query parameter %q (allowed: label)", k)
		}
		for _, v := range vs {
			i := bytes.IndexByte([]byte(v), '=')
			if i <= 0 {
				return nil, api.Errorf(errdefs.ErrInvalidArgument, "label filter %q: want key=value", v)
			}
			out[v[:i]] = v[i+1:]
		}
	}
	return out, nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	labels, err := labelFilter(r)
	if err != nil {
		return err
	}
	sbs, err := svc.List(r.Context(), api.ListOptions{Labels: labels})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sbs)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	sb, err := svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sb)
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	if err := svc.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ndjson writes exec events, one JSON object per line. Output is
// coalesced: consecutive writes to one stream become one event, sent
// when outputDelay has passed since the first of them, when outputChunk
// bytes are pending, when the other stream writes, or with the final
// event. A flood of small writes (`yes`) costs one event and one flush
// per 64 KiB instead of one per write, on the worker and again on the
// front; the exit event is never delayed, so a short exec answers at once.
type ndjson struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	started bool
	err     error
	done    bool        // the handler is returning: nothing may write after
	pend    []byte      // output not yet sent
	pendErr bool        // pend is stderr
	timer   *time.Timer // sends pend after outputDelay
	line    []byte      // encoding buffer, reused
}

const (
	outputDelay = 2 * time.Millisecond
	outputChunk = 64 << 10
)

// event sends ev after any pending output.
func (n *ndjson) event(ev api.ExecEvent) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err != nil {
		return n.err
	}
	if err := n.sendPendLocked(); err != nil {
		return err
	}
	return n.sendLocked(ev)
}

// output queues data of one stream.
func (n *ndjson) output(data []byte, stderr bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err != nil {
		return n.err
	}
	if len(n.pend) > 0 && n.pendErr != stderr {
		if err := n.sendPendLocked(); err != nil {
			return err
		}
	}
	n.pend, n.pendErr = append(n.pend, data...), stderr
	if len(n.pend) >= outputChunk {
		return n.sendPendLocked()
	}
	if n.timer == nil {
		n.timer = time.AfterFunc(outputDelay, n.tick)
	} else if len(n.pend) == len(data) {
		n.timer.Reset(outputDelay)
	}
	return nil
}

func (n *ndjson) tick() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.done && n.err == nil {
		n.sendPendLocked()
	}
}

// close sends what is pending and stops the timer: after it returns
// nothing writes to the response.
func (n *ndjson) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.err == nil {
		n.sendPendLocked()
	}
	n.done = true
	if n.timer != nil {
		n.timer.Stop()
	}
}

func (n *ndjson) sendPendLocked() error {
	if len(n.pend) == 0 {
		return nil
	}
	var ev api.ExecEvent
	if utf8.Valid(n.pend) {
		str := string(n.pend)
		if n.pendErr {
			ev.Stderr = &str
		} else {
			ev.Stdout = &str
		}
	} else if n.pendErr {
		ev.StderrB64 = n.pend
	} else {
		ev.StdoutB64 = n.pend
	}
	err := n.sendLocked(ev)
	n.pend = n.pend[:0]
	if cap(n.pend) > outputChunk*2 {
		n.pend = nil // one huge write: do not keep its buffer
	}
	return err
}

func (n *ndjson) sendLocked(ev api.ExecEvent) error {
	if n.done {
		return errors.New("exec stream already finished")
	}
	if !n.started {
		n.w.Header().Set("Content-Type", "application/x-ndjson")
		n.w.WriteHeader(http.StatusOK)
		n.started = true
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	n.line = append(append(n.line[:0], data...), '\n')
	if _, err := n.w.Write(n.line); err != nil {
		n.err = err
		return err
	}
	if f, ok := n.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

func (n *ndjson) isStarted() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.started
}

// streamWriter turns one output stream into events. A multi-byte UTF-8
// character split across writes is carried to the next write, so text
// stays text; bytes that are not UTF-8 travel base64-encoded.
type streamWriter struct {
	n      *ndjson
	stderr bool
	carry  []byte
}

func (s *streamWriter) Write(p []byte) (int, error) {
	data := p
	if len(s.carry) > 0 {
		data = append(s.carry, p...)
		s.carry = nil
	}
	if !utf8.Valid(data) {
		// Keep an incomplete trailing rune (at most 3 bytes) for later.
		for k := 1; k <= 3 && k < len(data); k++ {
			if utf8.Valid(data[:len(data)-k]) && !utf8.FullRune(data[len(data)-k:]) {
				s.carry = append([]byte(nil), data[len(data)-k:]...)
				data = data[:len(data)-k]
				break
			}
		}
	}
	if len(data) > 0 {
		if err := s.n.output(data, s.stderr); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (s *streamWriter) flush() {
	if len(s.carry) > 0 {
		s.n.output(s.carry, s.stderr)
		s.carry = nil
	}
}

// stream runs fn with NDJSON output writers and finishes with the exit
// event, or an error event if output had already started.
func stream(w http.ResponseWriter, fn func(stdout, stderr io.Writer) (api.ExecResult, error)) error {
	n := &ndjson{w: w}
	defer n.close()
	out, errw := &streamWriter{n: n}, &streamWriter{n: n, stderr: true}
	res, err := fn(out, errw)
	out.flush()
	errw.flush()
	if err != nil {
		if !n.isStarted() && !n.hasPend() {
			return err
		}
		_, code := api.ToHTTP(err)
		n.event(api.ExecEvent{Error: &api.ErrorDetail{Code: code, Message: err.Error()}})
		return err
	}
	exit := res.Exit
	return n.event(api.ExecEvent{Exit: &exit, DurationMS: res.DurationMS, CPUSeconds: res.CPUSeconds, Limit: res.Limit, Truncated: res.Truncated,
		Durability: res.Durability, Generation: res.Generation, Rungs: res.Rungs, Fallbacks: res.Fallbacks})
}

func (n *ndjson) hasPend() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.pend) > 0
}

func parseBool(q map[string]string, k string) (bool, error) {
	v, ok := q[k]
	if !ok || v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, api.Errorf(errdefs.ErrInvalidArgument, "query parameter %s=%q: want true or false", k, v)
	}
	return b, nil
}

func parseInt(q map[string]string, k string) (int64, error) {
	v, ok := q[k]
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, api.Errorf(errdefs.ErrInvalidArgument, "query parameter %s=%q: want a non-negative integer", k, v)
	}
	return n, nil
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	q, err := query(r, "wait")
	if err != nil {
		return err
	}
	wait, err := parseBool(q, "wait")
	if err != nil {
		return err
	}
	var req api.ExecRequest
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	id := r.PathValue("id")
	// Observed before the last byte goes out, so a client that reads
	// /metrics right after its exec sees it counted.
	run := func(stdout, stderr io.Writer) (api.ExecResult, error) {
		t0 := nowFunc()
		res, err := svc.Exec(r.Context(), id, req, stdout, stderr)
		s.observeExec(r, res, err, nowFunc().Sub(t0))
		return res, err
	}
	if wait {
		var out, errb bytes.Buffer
		res, err := run(&out, &errb)
		if err != nil {
			return err
		}
		res.Stdout, res.Stderr = out.String(), errb.String()
		return writeJSON(w, http.StatusOK, res)
	}
	return stream(w, run)
}

func (s *Server) startProcess(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	var req api.ExecRequest
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	p, err := svc.StartProcess(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, p)
}

func (s *Server) listProcesses(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	ps, err := svc.ListProcesses(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ps)
}

func pid(r *http.Request) (int, error) {
	v := r.PathValue("pid")
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, api.Errorf(errdefs.ErrInvalidArgument, "bad process id %q", v)
	}
	return n, nil
}

func (s *Server) getProcess(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	n, err := pid(r)
	if err != nil {
		return err
	}
	ps, err := svc.ListProcesses(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.PID == n {
			return writeJSON(w, http.StatusOK, p)
		}
	}
	return api.Errorf(errdefs.ErrNotFound, "process %d not found", n)
}

func (s *Server) attachProcess(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	n, err := pid(r)
	if err != nil {
		return err
	}
	return stream(w, func(stdout, stderr io.Writer) (api.ExecResult, error) {
		return svc.AttachProcess(r.Context(), r.PathValue("id"), n, stdout, stderr)
	})
}

func (s *Server) waitProcess(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	n, err := pid(r)
	if err != nil {
		return err
	}
	res, err := svc.WaitProcess(r.Context(), r.PathValue("id"), n)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

func (s *Server) stdinProcess(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	n, err := pid(r)
	if err != nil {
		return err
	}
	q, err := query(r, "close")
	if err != nil {
		return err
	}
	closeIn, err := parseBool(q, "close")
	if err != nil {
		return err
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxJSONBytes))
	if err != nil {
		return bodyErr(err, s.cfg.MaxJSONBytes)
	}
	if err := svc.WriteStdin(r.Context(), r.PathValue("id"), n, data, closeIn); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func bodyErr(err error, limit int64) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return api.Errorf(api.ErrTooLarge, "request body over %d bytes", limit)
	}
	return api.Errorf(errdefs.ErrInvalidArgument, "cannot read the request body: %v", err)
}

func (s *Server) signalProcess(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	n, err := pid(r)
	if err != nil {
		return err
	}
	var req api.SignalRequest
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	if err := svc.SignalProcess(r.Context(), r.PathValue("id"), n, req.Signal); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// lazyWriter sends its headers with the first byte, so an error found
// before any output still gets a proper error response.
type lazyWriter struct {
	w           http.ResponseWriter
	contentType string
	started     bool
}

func (l *lazyWriter) Write(p []byte) (int, error) {
	if !l.started {
		l.w.Header().Set("Content-Type", l.contentType)
		l.w.WriteHeader(http.StatusOK)
		l.started = true
	}
	return l.w.Write(p)
}

func (s *Server) getFiles(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	q, err := query(r, "path", "stat", "list", "recursive", "depth", "offset", "length", "format")
	if err != nil {
		return err
	}
	p, ok := q["path"]
	if !ok {
		return api.Errorf(errdefs.ErrInvalidArgument, "query parameter path is required")
	}
	id := r.PathValue("id")
	stat, err := parseBool(q, "stat")
	if err != nil {
		return err
	}
	list, err := parseBool(q, "list")
	if err != nil {
		return err
	}
	recursive, err := parseBool(q, "recursive")
	if err != nil {
		return err
	}
	depth, err := parseInt(q, "depth")
	if err != nil {
		return err
	}
	off, err := parseInt(q, "offset")
	if err != nil {
		return err
	}
	n, err := parseInt(q, "length")
	if err != nil {
		return err
	}
	switch {
	case stat:
		fi, err := svc.Stat(r.Context(), id, p)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, fi)
	case list:
		if depth > 1<<20 {
			depth = 1 << 20
		}
		fis, err := svc.ListFiles(r.Context(), id, p, api.ListFilesOptions{Recursive: recursive, Depth: int(depth)})
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, fis)
	case q["format"] == "tar":
		lw := &lazyWriter{w: w, contentType: "application/x-tar"}
		err := svc.DownloadTar(r.Context(), id, p, lw)
		if err != nil && lw.started {
			// Headers are gone: the tar ends without its trailer, which
			// every tar reader reports as a truncated archive.
			return nil
		}
		if err == nil && !lw.started {
			lw.Write(nil)
		}
		return err
	case q["format"] != "":
		return api.Errorf(errdefs.ErrInvalidArgument, "format=%q: the only format is tar", q["format"])
	}
	data, err := svc.ReadFile(r.Context(), id, p, off, n)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(data)
	return err
}

func (s *Server) putFiles(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	q, err := query(r, "path", "mode", "perm", "format", "durability")
	if err != nil {
		return err
	}
	p, ok := q["path"]
	if !ok {
		return api.Errorf(errdefs.ErrInvalidArgument, "query parameter path is required")
	}
	if r.ContentLength > s.cfg.MaxFileBytes {
		return api.Errorf(api.ErrTooLarge, "body of %d bytes; the limit is %d", r.ContentLength, s.cfg.MaxFileBytes)
	}
	var perm uint64
	if v := q["perm"]; v != "" {
		if perm, err = strconv.ParseUint(v, 8, 32); err != nil {
			return api.Errorf(errdefs.ErrInvalidArgument, "perm=%q: want octal permission bits like 0644", v)
		}
	}
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxFileBytes)
	id := r.PathValue("id")
	switch q["format"] {
	case "tar":
		if err := svc.UploadTar(r.Context(), id, p, body); err != nil {
			return err
		}
	case "":
		// Read the body here so a body over the limit is a 413 whatever
		// the backend does with partial reads.
		data, err := io.ReadAll(body)
		if err != nil {
			return bodyErr(err, s.cfg.MaxFileBytes)
		}
		var ack api.Ack
		if err := svc.WriteFile(r.Context(), id, api.WriteFileRequest{Path: p, Data: bytes.NewReader(data), Mode: q["mode"], Perm: uint32(perm),
			Durability: q["durability"], Ack: &ack}); err != nil {
			return err
		}
		if ack.Durability != "" {
			w.Header().Set("Warren-Durability", ack.Durability)
		}
		if ack.Generation != 0 {
			w.Header().Set("Warren-Generation", strconv.FormatUint(ack.Generation, 10))
		}
	default:
		return api.Errorf(errdefs.ErrInvalidArgument, "format=%q: the only format is tar", q["format"])
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteFiles(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	q, err := query(r, "path", "recursive")
	if err != nil {
		return err
	}
	p, ok := q["path"]
	if !ok {
		return api.Errorf(errdefs.ErrInvalidArgument, "query parameter path is required")
	}
	rec, err := parseBool(q, "recursive")
	if err != nil {
		return err
	}
	if err := svc.Remove(r.Context(), r.PathValue("id"), p, rec); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) mkdir(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	var req api.MkdirRequest
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	if err := svc.Mkdir(r.Context(), r.PathValue("id"), req.Path, req.Perm); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) move(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	var req api.MoveRequest
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	if err := svc.Move(r.Context(), r.PathValue("id"), req.From, req.To); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// empty is the optional body of hibernate and resume.
type empty struct{}

func (s *Server) hibernate(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	if err := s.decode(w, r, &empty{}, true); err != nil {
		return err
	}
	sb, err := svc.Hibernate(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sb)
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	if err := s.decode(w, r, &empty{}, true); err != nil {
		return err
	}
	sb, err := svc.Resume(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, sb)
}

func (s *Server) fork(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	var req api.ForkRequest
	if err := s.decode(w, r, &req, true); err != nil {
		return err
	}
	sbs, err := svc.ForkWith(r.Context(), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, api.ForkResult{Sandboxes: sbs})
}

func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	var req api.SnapshotRequest
	if err := s.decode(w, r, &req, false); err != nil {
		return err
	}
	snap, err := svc.CreateSnapshot(r.Context(), r.PathValue("id"), req.Name)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, snap)
}

func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	snaps, err := svc.ListSnapshots(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, snaps)
}

func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	snap, err := svc.GetSnapshot(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, snap)
}

func (s *Server) deleteSnapshot(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	if err := svc.DeleteSnapshot(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listImages(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	imgs, err := svc.ListImages(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, imgs)
}

// buildImage builds an image of the uploaded tar (?name=NAME, optional
// dockerfile=PATH and repeated build_arg=K=V).
func (s *Server) buildImage(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	args := r.URL.Query()["build_arg"]
	rest := r.URL.Query()
	rest.Del("build_arg")
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = rest.Encode()
	q, err := query(r2, "name", "dockerfile")
	if err != nil {
		return err
	}
	if q["name"] == "" {
		return api.Errorf(errdefs.ErrInvalidArgument, "query parameter name is required")
	}
	opts := api.ImageBuildOptions{Dockerfile: q["dockerfile"]}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return api.Errorf(errdefs.ErrInvalidArgument, "build_arg %q: want NAME=VALUE", a)
		}
		if opts.BuildArgs == nil {
			opts.BuildArgs = map[string]string{}
		}
		opts.BuildArgs[k] = v
	}
	if r.ContentLength > s.cfg.MaxFileBytes {
		return api.Errorf(api.ErrTooLarge, "body of %d bytes; the limit is %d", r.ContentLength, s.cfg.MaxFileBytes)
	}
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxFileBytes)
	var img api.Image
	if im, ok := svc.(api.ImageManager); ok {
		img, err = im.BuildImageWith(r.Context(), q["name"], body, opts)
	} else if opts.Dockerfile != "" || opts.BuildArgs != nil {
		return api.Errorf(errdefs.ErrNotImplemented, "this node builds only a tar's root Dockerfile, without build arguments")
	} else {
		img, err = svc.BuildImage(r.Context(), q["name"], body)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, img)
}

func (s *Server) deleteImage(w http.ResponseWriter, r *http.Request, svc api.Service) error {
	im, ok := svc.(api.ImageManager)
	if !ok {
		return api.Errorf(errdefs.ErrNotImplemented, "this node cannot remove images through the API")
	}
	if err := im.DeleteImage(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
