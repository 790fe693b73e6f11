package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/containerd/errdefs"
	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/sandbox/node"
)

// watchEvents runs a watch in the background; its events arrive on the
// returned channel, which is closed when the watch ends.
func watchEvents(t *testing.T, ctx context.Context, w api.FileWatcher, id string, req api.WatchRequest) (<-chan api.WatchEvent, <-chan error) {
	t.Helper()
	evs := make(chan api.WatchEvent, 100000)
	errc := make(chan error, 1)
	go func() {
		defer close(evs)
		errc <- w.WatchFiles(ctx, id, req, func(ev api.WatchEvent) error {
			evs <- ev
			return nil
		})
	}()
	select {
	case ev := <-evs:
		if ev.Type != api.WatchReady {
			t.Fatalf("first event %+v, want ready", ev)
		}
	case err := <-errc:
		t.Fatalf("watch failed: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no ready event")
	}
	return evs, errc
}

func nextEvent(t *testing.T, evs <-chan api.WatchEvent) api.WatchEvent {
	t.Helper()
	select {
	case ev, ok := <-evs:
		if !ok {
			t.Fatal("the watch ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return api.WatchEvent{}
}

func TestWatch(t *testing.T) {
	tn := startNode(t, node.Options{})
	ctx := context.Background()
	c, _ := tn.tenant(t)
	sb, err := c.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecWait(ctx, sb.ID, api.ExecRequest{Script: "mkdir -p /w/deep && echo x > /w/file"}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	evs, _ := watchEvents(t, wctx, c, sb.ID, api.WatchRequest{Path: "/w"})
	exec := func(script string) {
		t.Helper()
		res, err := c.ExecWait(ctx, sb.ID, api.ExecRequest{Script: script})
		if err != nil || res.Exit != 0 {
			t.Fatalf("%s: %+v %v", script, res, err)
		}
	}
	steps := []struct {
		name string
		do   func()
		want api.WatchEvent
	}{
		{"API write creates", func() {
			if err := c.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/w/a.txt", Data: strings.NewReader("hi")}); err != nil {
				t.Fatal(err)
			}
		}, api.WatchEvent{Type: "create", Name: "a.txt", FileType: "file"}},
		{"resident append writes", func() { exec("echo more >> /w/a.txt") }, api.WatchEvent{Type: "write", Name: "a.txt", FileType: "file"}},
		{"chmod", func() { exec("chmod 600 /w/a.txt") }, api.WatchEvent{Type: "chmod", Name: "a.txt", FileType: "file"}},
		{"rename", func() { exec("mv /w/a.txt /w/b.txt") }, api.WatchEvent{Type: "rename", Name: "b.txt", OldName: "a.txt", FileType: "file"}},
		{"API move renames", func() {
			if err := c.Move(ctx, sb.ID, "/w/b.txt", "/w/c.txt"); err != nil {
				t.Fatal(err)
			}
		}, api.WatchEvent{Type: "rename", Name: "c.txt", OldName: "b.txt", FileType: "file"}},
		{"remove", func() { exec("rm /w/c.txt") }, api.WatchEvent{Type: "remove", Name: "c.txt"}},
		// Not recursive: a change below a child directory is not reported,
		// the next change at the top is.
		{"not recursive", func() { exec("echo y > /w/deep/inner; ln -s file /w/link") }, api.WatchEvent{Type: "create", Name: "link", FileType: "symlink"}},
		{"mkdir", func() { exec("mkdir /w/sub") }, api.WatchEvent{Type: "create", Name: "sub", FileType: "dir"}},
		{"outside the watched path", func() { exec("echo z > /tmp/elsewhere; rm /w/file") }, api.WatchEvent{Type: "remove", Name: "file"}},
	}
	for _, st := range steps {
		st.do()
		if got := nextEvent(t, evs); got != st.want {
			t.Fatalf("%s: event %+v, want %+v", st.name, got, st.want)
		}
	}

	// Recursive: names are relative paths.
	revs, _ := watchEvents(t, wctx, c, sb.ID, api.WatchRequest{Path: "/w", Recursive: true})
	exec("echo y >> /w/deep/inner")
	if got, want := nextEvent(t, revs), (api.WatchEvent{Type: "write", Name: "deep/inner", FileType: "file"}); got != want {
		t.Fatalf("recursive: %+v, want %+v", got, want)
	}
	// A new tree: the directory and what is in it.
	exec("mkdir -p /w/t/u && echo 1 > /w/t/u/f")
	for _, want := range []api.WatchEvent{{Type: "create", Name: "t", FileType: "dir"}, {Type: "create", Name: "t/u", FileType: "dir"}, {Type: "create", Name: "t/u/f", FileType: "file"}} {
		if got := nextEvent(t, revs); got != want {
			t.Fatalf("new tree: %+v, want %+v", got, want)
		}
	}
	if got, want := nextEvent(t, evs), (api.WatchEvent{Type: "create", Name: "t", FileType: "dir"}); got != want {
		t.Fatalf("new tree, not recursive: %+v, want %+v", got, want)
	}

	// Errors before the stream: a missing path, a file, another tenant.
	if err := c.WatchFiles(ctx, sb.ID, api.WatchRequest{Path: "/nope"}, func(api.WatchEvent) error { return nil }); !errdefs.IsNotFound(err) {
		t.Errorf("missing path: %v, want not found", err)
	}
	if err := c.WatchFiles(ctx, sb.ID, api.WatchRequest{Path: "/w/deep/inner"}, func(api.WatchEvent) error { return nil }); !errdefs.IsInvalidArgument(err) {
		t.Errorf("a file: %v, want invalid argument", err)
	}
	other, _ := tn.tenant(t)
	if err := other.WatchFiles(ctx, sb.ID, api.WatchRequest{Path: "/w"}, func(api.WatchEvent) error { return nil }); !errdefs.IsNotFound(err) {
		t.Errorf("other tenant: %v, want not found", err)
	}

	// Hibernate ends both streams with a closing event.
	if _, err := c.Hibernate(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan api.WatchEvent{evs, revs} {
		var last api.WatchEvent
		for ev := range ch {
			last = ev
		}
		if last.Type != api.WatchClosed || last.Reason != "hibernated" {
			t.Fatalf("after hibernate the stream ended with %+v", last)
		}
	}
	// Delete: "deleted"; removing the watched directory: "removed".
	devs, _ := watchEvents(t, ctx, c, sb.ID, api.WatchRequest{Path: "/w/sub"})
	exec("rm -r /w/sub")
	var got []api.WatchEvent
	for ev := range devs {
		got = append(got, ev)
	}
	if fmt.Sprint(got) != fmt.Sprint([]api.WatchEvent{{Type: "remove", Name: "."}, {Type: "closed", Reason: "removed"}}) {
		t.Fatalf("removing the watched dir: %+v", got)
	}
	devs, _ = watchEvents(t, ctx, c, sb.ID, api.WatchRequest{Path: "/"})
	if err := c.Delete(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	var last api.WatchEvent
	for ev := range devs {
		last = ev
	}
	if last.Type != api.WatchClosed || last.Reason != "deleted" {
		t.Fatalf("after delete the stream ended with %+v", last)
	}
}

// watchBufferForTest is sandbox's watch buffer (4,096 events).
const watchBufferForTest = 4096

// TestWatchOverflow: a client that does not read loses events to a
// bounded buffer and is told so; the watch goes on.
func TestWatchOverflow(t *testing.T) {
	tn := startNode(t, node.Options{})
	ctx := context.Background()
	svc := tn.n.Manager.For("t1")
	sb, err := svc.Create(ctx, api.CreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	w := svc.(api.FileWatcher)
	release := make(chan struct{})
	evs := make(chan api.WatchEvent, 100000)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go w.WatchFiles(wctx, sb.ID, api.WatchRequest{Path: "/tmp"}, func(ev api.WatchEvent) error {
		evs <- ev
		if ev.Type == api.WatchCreate && ev.Name == "f0-1" {
			<-release // a stuck client from the first event on
		}
		return nil
	})
	if ev := nextEvent(t, evs); ev.Type != api.WatchReady {
		t.Fatalf("first event %+v", ev)
	}
	// 6,000 files over several ticks: more than the 4,096 the buffer holds.
	for i := 0; i < 6; i++ {
		if _, err := svc.Exec(ctx, sb.ID, api.ExecRequest{Script: fmt.Sprintf("for i in $(seq 1000); do : > /tmp/f%d-$i; done", i)}, nil, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	close(release)
	// Once the client reads again, the events kept and the count of those
	// dropped add up, and the watch goes on: a file written now arrives
	// after every overflow report.
	if err := svc.WriteFile(ctx, sb.ID, api.WriteFileRequest{Path: "/tmp/after", Data: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	creates, dropped, overflows := 0, 0, 0
	for {
		var ev api.WatchEvent
		select {
		case ev = <-evs:
		case <-time.After(10 * time.Second):
			t.Fatalf("stuck after %d creates and %d dropped", creates, dropped)
		}
		if ev.Type == api.WatchCreate && ev.Name == "after" {
			break
		}
		switch ev.Type {
		case api.WatchCreate:
			creates++
		case api.WatchOverflow:
			overflows++
			dropped += ev.Dropped
		default:
			t.Fatalf("unexpected %+v", ev)
		}
	}
	if overflows == 0 || creates > watchBufferForTest+1 || creates+dropped != 6000 {
		t.Fatalf("%d creates + %d dropped in %d overflow events, want 6000 with an overflow", creates, dropped, overflows)
	}
}
