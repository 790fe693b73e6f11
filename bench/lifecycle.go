package bench

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/api"
)

// Sandbox-level scenarios: the lifecycle through the manager's Service in
// process (the same calls the HTTP API makes, without HTTP).
func init() {
	register(
		Scenario{Name: "hibernate", Keys: []string{"hibernate", "resume_warm"}, Run: runHibernate},
		Scenario{Name: "resume_cold", Keys: []string{"resume_cold", "resume_cold_first_exec", "resume_cold_read_10mb"}, Run: runResumeCold},
		Scenario{Name: "mem_per_hibernated_bytes", Run: runMemHibernated},
	)
}

// withStack runs fn over a service in a fresh temporary data directory.
func withStack(ctx context.Context, e *Env, fn func(st *Stack) error) (err error) {
	if e.Service == nil {
		return fmt.Errorf("no sandbox service in this build")
	}
	d, err := os.MkdirTemp("", "warren-bench-")
	if err != nil {
		return fmt.Errorf("cannot create a data directory: %w", err)
	}
	defer os.RemoveAll(d)
	st, err := e.Service(ctx, filepath.Join(d, "blobs"))
	if err != nil {
		return err
	}
	st.Wrap = e.WrapService
	defer func() {
		if cerr := st.Close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("closing the service: %w", cerr)
		}
	}()
	return fn(st)
}

// newPrepared creates a sandbox and runs the mem/fork preparation in it.
func newPrepared(ctx context.Context, svc api.Service, b *buffers, i int) (string, error) {
	sb, err := svc.Create(ctx, createReq())
	if err != nil {
		return "", fmt.Errorf("create: %w", err)
	}
	for _, c := range []struct {
		script string
		check  Check
	}{{CmdFirst, isHello}, {CmdPipe, isOne}, {CmdRTT, isHi}, {CmdWrite1K(i), isEmpty}} {
		if err := b.svcRun(ctx, svc, sb.ID, c.script, c.check); err != nil {
			return "", err
		}
	}
	return sb.ID, nil
}

func wantState(op string, sb api.Sandbox, err error, state string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if sb.State != state {
		return fmt.Errorf("%s: sandbox %s is %q, want %q", op, sb.ID, sb.State, state)
	}
	return nil
}

// runHibernate: one prepared sandbox; each round writes /tmp/a (create
// command, untimed), hibernates (timed: persist the delta and the session
// into the store, drop them from memory), resumes in the same manager
// (resume_warm: the store's files are in the page cache) and checks the
// file survived.
func runHibernate(ctx context.Context, e *Env, r *Result) error {
	warm, n := e.Opts.iters(100), e.Opts.iters(1000)
	return withStack(ctx, e, func(st *Stack) error {
		svc := st.Service()
		var b buffers
		id, err := newPrepared(ctx, svc, &b, 1)
		if err != nil {
			return err
		}
		hib := make([]float64, 0, n)
		res := make([]float64, 0, n)
		for i := range warm + n {
			if err := b.svcRun(ctx, svc, id, CmdFirst, isHello); err != nil {
				return err
			}
			t0 := time.Now()
			sb, err := svc.Hibernate(ctx, id)
			t1 := time.Now()
			if err := wantState("hibernate", sb, err, api.StateStandby); err != nil {
				return err
			}
			t2 := time.Now()
			sb, err = svc.Resume(ctx, id)
			t3 := time.Now()
			if err := wantState("resume", sb, err, api.StateRunning); err != nil {
				return err
			}
			if err := b.svcRun(ctx, svc, id, CmdForkRead, isHello); err != nil {
				return fmt.Errorf("after resume: %w", err)
			}
			if i >= warm {
				hib = append(hib, Micros(t1.Sub(t0)))
				res = append(res, Micros(t3.Sub(t2)))
			}
		}
		r.Metrics.Set("hibernate", Summarize(hib, warm))
		r.Metrics.Set("resume_warm", Summarize(res, warm))
		where := "the local blob store (store/dir, no fsync)"
		if st.DeltasInMemory() {
			where = "process memory (sandbox.MemDeltas: vfs persistence had not landed)"
		}
		r.Notes.Set("hibernate", "Service.Hibernate of a running, idle sandbox (base + create command, pipeline, echo, 1 KiB write; /tmp/a rewritten before each round): the vfs delta and the session state go to "+where+" and the sandbox keeps only its StateRef. In process, no HTTP.")
		r.Notes.Set("resume_warm", "Service.Resume of that standby sandbox in the same manager, right after hibernate: the delta's blobs are still in the page cache (or in memory). Checked after each resume: `cat /tmp/a` prints hello.")
		return nil
	})
}

// dropStoreCache evicts the blob store's files from the page cache with
// posix_fadvise(POSIX_FADV_DONTNEED); dirty pages are not dropped, so the
// caller syncs once after writing (the bench's store skips fsync). Unlike
// /proc/sys/vm/drop_caches it needs no root and leaves warren's own
// executable and libraries cached, so a sample measures reading the
// sandbox's state from disk, not page-faulting the binary back in.
func dropStoreCache(dir string) (files int, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("fadvise %s: %w", p, err)
		}
		files++
		return nil
	})
	if err != nil {
		return files, fmt.Errorf("cannot drop the store from the page cache: %w", err)
	}
	return files, nil
}

const coldDeltaBytes = 10 << 20

// runResumeCold: sandboxes each with a 10 MiB file of incompressible bytes
// in their delta, hibernated by closing the manager; a new manager over the
// same store then resumes each one after the page cache is dropped.
func runResumeCold(ctx context.Context, e *Env, r *Result) error {
	warm, n := 2, e.Opts.iters(30)
	if e.Opts.Quick { // 10 MiB written and the page cache dropped per sample
		warm, n = 1, 5
	}
	return withStack(ctx, e, func(st *Stack) error {
		if st.DeltasInMemory() {
			r.Notes.Set("resume_cold", "not measured: deltas are kept in process memory (sandbox.MemDeltas; vfs persistence had not landed), so no resume loads anything from the store.")
			return nil
		}
		svc := st.Service()
		var b buffers
		ids := make([]string, warm+n)
		big := make([]byte, coldDeltaBytes)
		for i := range ids {
			sb, err := svc.Create(ctx, createReq())
			if err != nil {
				return fmt.Errorf("create: %w", err)
			}
			if err := b.svcRun(ctx, svc, sb.ID, CmdFirst, isHello); err != nil {
				return err
			}
			rng := rand.NewChaCha8([32]byte{byte(i), byte(i >> 8), 'w'})
			rng.Read(big)
			if err := svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/home/user/big.bin", Data: bytes.NewReader(big)}); err != nil {
				return fmt.Errorf("writing the 10 MiB file: %w", err)
			}
			ids[i] = sb.ID
		}
		big = nil
		if err := st.Reopen(ctx); err != nil {
			return err
		}
		syscall.Sync() // write back the hibernated state once, so its pages are clean and can be dropped
		e.Log("resume_cold: %d sandboxes hibernated and synced", len(ids))
		svc = st.Service()
		files := 0
		res := make([]float64, 0, n)
		first := make([]float64, 0, n)
		read := make([]float64, 0, n)
		for i, id := range ids {
			var err error
			if files, err = dropStoreCache(st.dataDir); err != nil {
				return err
			}
			t0 := time.Now()
			sb, err := svc.Resume(ctx, id)
			t1 := time.Now()
			if err := wantState("resume", sb, err, api.StateRunning); err != nil {
				return err
			}
			if err := b.svcRun(ctx, svc, id, CmdForkRead, isHello); err != nil {
				return fmt.Errorf("after cold resume: %w", err)
			}
			t2 := time.Now()
			want := fmt.Sprint(coldDeltaBytes)
			if err := b.svcRun(ctx, svc, id, "wc -c < /home/user/big.bin", Check{want, func(o []byte) bool { return string(bytes.TrimSpace(o)) == want }}); err != nil {
				return fmt.Errorf("after cold resume: %w", err)
			}
			t3 := time.Now()
			if i >= warm {
				res = append(res, Micros(t1.Sub(t0)))
				first = append(first, Micros(t2.Sub(t0)))
				read = append(read, Micros(t3.Sub(t2)))
			}
		}
		r.Metrics.Set("resume_cold", Summarize(res, warm))
		r.Metrics.Set("resume_cold_first_exec", Summarize(first, warm))
		r.Metrics.Set("resume_cold_read_10mb", Summarize(read, warm))
		r.Notes.Set("resume_cold", "Each sandbox: base + create command + a 10 MiB file of random bytes (WriteFile), hibernated into the local blob store (store/dir) by closing the manager; a new manager over the same store and records then resumes each sandbox once, nothing of it in memory. Page cache: before every sample every file of the blob store ("+fmt.Sprint(files)+" files), written back once by sync(2), is evicted with posix_fadvise(POSIX_FADV_DONTNEED), so the delta and session state come from disk, while warren's own code stays cached (drop_caches would also evict the executable). resume_cold = Service.Resume; resume_cold_first_exec (informational) adds `cat /tmp/a`; resume_cold_read_10mb (informational) = `wc -c < big.bin` after that, i.e. what reading the whole delta costs when it is loaded lazily.")
		return nil
	})
}

// runMemHibernated: MemN prepared sandboxes hibernated; heap and RSS deltas
// against the baseline before they were created, divided by n: what a
// standby sandbox keeps in memory. store_bytes is what the store holds.
func runMemHibernated(ctx context.Context, e *Env, r *Result) error {
	n := e.Opts.MemN
	return withStack(ctx, e, func(st *Stack) error {
		svc := st.Service()
		var b buffers
		for i := range 20 { // warm-up before the baseline
			id, err := newPrepared(ctx, svc, &b, i)
			if err != nil {
				return err
			}
			if err := svc.Delete(ctx, id); err != nil {
				return fmt.Errorf("delete: %w", err)
			}
		}
		b = buffers{}
		store0 := dirBytes(st)
		h0, rss0, err := memSample()
		if err != nil {
			return err
		}
		for i := range n {
			id, err := newPrepared(ctx, svc, &b, i)
			if err != nil {
				return err
			}
			sb, err := svc.Hibernate(ctx, id)
			if err := wantState("hibernate", sb, err, api.StateStandby); err != nil {
				return err
			}
		}
		b = buffers{}
		h1, rss1, err := memSample()
		if err != nil {
			return err
		}
		var o Object
		o.Set("heap_used", (int64(h1)-int64(h0))/int64(n))
		o.Set("rss", (rss1-rss0)/int64(n))
		o.Set("n", n)
		o.Set("unit", "bytes")
		o.Set("store_bytes", (dirBytes(st)-store0)/int64(n))
		o.Set("heap_used_total_delta", int64(h1)-int64(h0))
		o.Set("rss_total_delta", rss1-rss0)
		r.Metrics.Set("mem_per_hibernated_bytes", o)
		note := "n sandboxes prepared like mem_per_sandbox_bytes, then hibernated (standby: Record + StateRef). heap_used = Go HeapAlloc delta, rss = process RSS delta (/proc/self/statm), after runtime.GC + debug.FreeOSMemory, per sandbox, against a baseline taken before they were created. store_bytes = growth of the blob store directory per sandbox (file sizes). rss is process-wide: at ~2 KB per sandbox it is within its noise and can come out negative; heap_used is the figure to read."
		if st.DeltasInMemory() {
			note += " Deltas were kept in process memory (sandbox.MemDeltas: vfs persistence had not landed), so heap_used includes them."
		}
		r.Notes.Set("mem_per_hibernated_bytes", note)
		runtime.KeepAlive(st)
		return nil
	})
}

// dirBytes sums the sizes of the files under the stack's blob directory.
func dirBytes(st *Stack) int64 {
	var total int64
	filepath.WalkDir(st.dataDir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}
