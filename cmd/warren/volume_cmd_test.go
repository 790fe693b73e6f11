package main

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
)

func TestParseVolumeMount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want api.VolumeMount
		err  string
	}{
		{"data:/data", api.VolumeMount{Name: "data", Path: "/data"}, ""},
		{"data:/mnt/d:ro", api.VolumeMount{Name: "data", Path: "/mnt/d", ReadOnly: true}, ""},
		{"data:/mnt/d:rw", api.VolumeMount{Name: "data", Path: "/mnt/d"}, ""},
		{"data", api.VolumeMount{}, "want NAME:/path"},
		{":/data", api.VolumeMount{}, "want NAME:/path"},
		{"data:rel", api.VolumeMount{}, "want NAME:/path"},
		{"data:/d:rx", api.VolumeMount{}, `mode "rx"`},
	} {
		got, err := parseVolumeMount(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestVolumeBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1000: "1000", 1024: "1K", 1536: "1.5K", 10 << 30: "10G", 1<<20 + 1: "1.0M"} {
		if got := volumeBytes(n); got != want {
			t.Errorf("volumeBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
