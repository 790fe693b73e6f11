package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/shell"
)

func TestBackstop(t *testing.T) {
	tests := []struct {
		name     string
		b        backstop
		wantCode int
		wantMsg  string
	}{
		{"heap past its bound", backstop{heapMax: 1}, shell.StatusLimit, "warren: memory limit exceeded"},
		{"past the deadline", backstop{deadline: 100 * time.Millisecond}, shell.StatusTimeout, "warren: time limit exceeded (100ms)"},
		{"within both", backstop{heapMax: 1 << 40, deadline: time.Hour}, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errb bytes.Buffer
			code := make(chan int, 1)
			b := tt.b
			b.every, b.stderr, b.exit = 20*time.Millisecond, &errb, func(c int) { code <- c }
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { b.run(stop); close(done) }()
			select {
			case c := <-code:
				if c != tt.wantCode || !strings.Contains(errb.String(), tt.wantMsg) {
					t.Errorf("exit %d %q, want %d %q", c, errb.String(), tt.wantCode, tt.wantMsg)
				}
			case <-time.After(1500 * time.Millisecond):
				if tt.wantCode != -1 {
					t.Errorf("no exit within 1.5 s, want %d", tt.wantCode)
				}
			}
			close(stop)
			<-done
		})
	}
}
