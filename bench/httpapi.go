package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/api"
)

// api_* scenarios: the same lifecycle through the real HTTP server on a
// loopback port, started by the bench, driven by the Go client (JSON
// requests, NDJSON exec streams, keep-alive connections).
func init() {
	register(
		Scenario{Name: "api_create_first_exec", Run: runAPICreate},
		Scenario{Name: "api_exec_rtt", Run: runAPIExecRTT},
		Scenario{Name: "api_resume", Run: runAPIResume},
		Scenario{Name: "api_fork", Run: runAPIFork},
	)
}

func withAPI(ctx context.Context, e *Env, fn func(c api.Service) error) error {
	return withStack(ctx, e, func(st *Stack) error {
		c, err := st.Serve(ctx)
		if err != nil {
			return err
		}
		return fn(c)
	})
}

const apiNote = "Through the HTTP API: warren's server on 127.0.0.1 (ephemeral port) in this process, the Go client over keep-alive HTTP/1.1; a sandbox is the manager's (real shell + vfs, base tree image, store/dir blob store). api_create_first_exec = create + first exec of the create command (sandbox deleted untimed); api_exec_rtt = exec of `echo hi` on a warm sandbox; api_resume = resume of a sandbox just hibernated (warm); api_fork = fork (count 1) of a prepared parent, the child checked with `cat /tmp/a` and deleted untimed."

// runAPICreate: POST /sandboxes then the first exec (NDJSON stream) of the
// create command; the sandbox is deleted untimed.
func runAPICreate(ctx context.Context, e *Env, r *Result) error {
	warm, n := e.Opts.iters(20), e.Opts.iters(200)
	return withAPI(ctx, e, func(c api.Service) error {
		var b buffers
		samples := make([]float64, 0, n)
		for i := range warm + n {
			b.reset()
			t0 := time.Now()
			sb, err := c.Create(ctx, createReq())
			if err != nil {
				return fmt.Errorf("create: %w", err)
			}
			res, err := c.Exec(ctx, sb.ID, api.ExecRequest{Script: CmdFirst}, &b.out, &b.err)
			us := Micros(time.Since(t0))
			if err := verify(CmdFirst, res.Exit, err, b.out.Bytes(), b.err.Bytes(), isHello); err != nil {
				return err
			}
			if err := c.Delete(ctx, sb.ID); err != nil {
				return fmt.Errorf("delete: %w", err)
			}
			if i >= warm {
				samples = append(samples, us)
			}
		}
		r.Metrics.Set("api_create_first_exec", Summarize(samples, warm))
		r.Notes.Set("api", apiNote)
		return nil
	})
}

func runAPIExecRTT(ctx context.Context, e *Env, r *Result) error {
	warm, n := e.Opts.iters(200), e.Opts.iters(2000)
	return withAPI(ctx, e, func(c api.Service) error {
		var b buffers
		sb, err := c.Create(ctx, createReq())
		if err != nil {
			return fmt.Errorf("create: %w", err)
		}
		samples := make([]float64, 0, n)
		for i := range warm + n {
			b.reset()
			t0 := time.Now()
			res, err := c.Exec(ctx, sb.ID, api.ExecRequest{Script: CmdRTT}, &b.out, &b.err)
			us := Micros(time.Since(t0))
			if err := verify(CmdRTT, res.Exit, err, b.out.Bytes(), b.err.Bytes(), isHi); err != nil {
				return err
			}
			if i >= warm {
				samples = append(samples, us)
			}
		}
		r.Metrics.Set("api_exec_rtt", Summarize(samples, warm))
		r.Notes.Set("api", apiNote)
		return nil
	})
}

func runAPIResume(ctx context.Context, e *Env, r *Result) error {
	warm, n := e.Opts.iters(20), e.Opts.iters(200)
	return withAPI(ctx, e, func(c api.Service) error {
		var b buffers
		id, err := newPrepared(ctx, c, &b, 3)
		if err != nil {
			return err
		}
		samples := make([]float64, 0, n)
		for i := range warm + n {
			if err := b.svcRun(ctx, c, id, CmdFirst, isHello); err != nil {
				return err
			}
			sb, err := c.Hibernate(ctx, id)
			if err := wantState("hibernate", sb, err, api.StateStandby); err != nil {
				return err
			}
			t0 := time.Now()
			sb, err = c.Resume(ctx, id)
			us := Micros(time.Since(t0))
			if err := wantState("resume", sb, err, api.StateRunning); err != nil {
				return err
			}
			if err := b.svcRun(ctx, c, id, CmdForkRead, isHello); err != nil {
				return fmt.Errorf("after resume: %w", err)
			}
			if i >= warm {
				samples = append(samples, us)
			}
		}
		r.Metrics.Set("api_resume", Summarize(samples, warm))
		r.Notes.Set("api", apiNote)
		return nil
	})
}

func runAPIFork(ctx context.Context, e *Env, r *Result) error {
	warm, n := e.Opts.iters(20), e.Opts.iters(200)
	return withAPI(ctx, e, func(c api.Service) error {
		var b buffers
		id, err := newPrepared(ctx, c, &b, 5)
		if err != nil {
			return err
		}
		samples := make([]float64, 0, n)
		for i := range warm + n {
			t0 := time.Now()
			kids, err := c.Fork(ctx, id, 1)
			us := Micros(time.Since(t0))
			if err != nil {
				return fmt.Errorf("fork: %w", err)
			}
			if len(kids) != 1 {
				return fmt.Errorf("fork of count 1 returned %d sandboxes", len(kids))
			}
			if err := b.svcRun(ctx, c, kids[0].ID, CmdForkRead, isHello); err != nil {
				return fmt.Errorf("in fork: %w", err)
			}
			if err := c.Delete(ctx, kids[0].ID); err != nil {
				return fmt.Errorf("delete: %w", err)
			}
			if i >= warm {
				samples = append(samples, us)
			}
		}
		r.Metrics.Set("api_fork", Summarize(samples, warm))
		r.Notes.Set("api", apiNote)
		return nil
	})
}
