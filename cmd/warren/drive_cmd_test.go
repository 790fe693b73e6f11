package main

import (
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/api"
)

func TestParseDriveMount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want api.DriveMount
		err  string
	}{
		{"shared:/shared", api.DriveMount{Drive: "shared", Path: "/shared"}, ""},
		{"shared:/mnt/s:ro", api.DriveMount{Drive: "shared", Path: "/mnt/s", ReadOnly: true}, ""},
		{"shared", api.DriveMount{}, "want DRIVE:/path"},
		{"shared:s", api.DriveMount{}, "want DRIVE:/path"},
		{"shared:/s:x", api.DriveMount{}, `mode "x"`},
	} {
		got, err := parseDriveMount(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "mount ") {
				t.Errorf("%q: %v, want an error saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}
