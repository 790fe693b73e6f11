package image

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLookupUser(t *testing.T) {
	root := fstest.MapFS{
		"etc/passwd": {Data: []byte("root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\napp:x:1234:50::/srv/app:/bin/sh\nbroken line\n")},
		"etc/group":  {Data: []byte("root:x:0:\nstaff:x:50:\nwheel:x:10:user\n")},
	}
	read := FSReader(root)
	cases := []struct {
		spec    string
		want    User
		wantErr string
	}{
		{"", User{Name: "root", Uid: 0, Gid: 0, Home: "/root"}, ""},
		{"user", User{Name: "user", Uid: 1000, Gid: 1000, Home: "/home/user"}, ""},
		{"1000:1000", User{Name: "user", Uid: 1000, Gid: 1000, Home: "/home/user"}, ""},
		{"app", User{Name: "app", Uid: 1234, Gid: 50, Home: "/srv/app"}, ""},
		{"user:wheel", User{Name: "user", Uid: 1000, Gid: 10, Home: "/home/user"}, ""},
		{"user:77", User{Name: "user", Uid: 1000, Gid: 77, Home: "/home/user"}, ""},
		{"4242", User{Name: "4242", Uid: 4242, Gid: 4242, Home: "/"}, ""},
		{"nobody", User{}, "not in the image's /etc/passwd"},
		{"user:nogroup", User{}, "not in the image's /etc/group"},
	}
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := LookupUser(read, tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LookupUser(%q) = %+v, %v; want an error with %q", tc.spec, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("LookupUser(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
			}
		})
	}
	// No /etc/passwd at all (a plain directory image): numeric ids work.
	if u, err := LookupUser(FSReader(fstest.MapFS{}), "1000"); err != nil || u.Uid != 1000 || u.Home != "/" {
		t.Errorf("uid 1000 without passwd: %+v %v", u, err)
	}
}

func TestStartOf(t *testing.T) {
	root := fstest.MapFS{"etc/passwd": {Data: []byte("user:x:1000:1000:user:/home/user:/bin/sh\n")}}
	cases := []struct {
		name string
		cfg  Config
		want Start
	}{
		{"default image", DefaultConfig, Start{User: User{Name: "user", Uid: 1000, Gid: 1000, Home: "/home/user"}, Dir: "/home/user",
			Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/user"}}},
		{"no config", Config{}, Start{User: User{Name: "root", Home: "/root"}, Dir: "/", Env: []string{"PATH=" + DefaultPath, "HOME=/root"}}},
		{"env kept, home added", Config{User: "user", WorkingDir: "/w", Env: []string{"A=1"}},
			Start{User: User{Name: "user", Uid: 1000, Gid: 1000, Home: "/home/user"}, Dir: "/w", Env: []string{"A=1", "PATH=" + DefaultPath, "HOME=/home/user"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.cfg.StartOf(FSReader(root))
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("StartOf = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
