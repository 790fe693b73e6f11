package shell

import (
	"strings"
	"testing"
)

// ulimit and umask as bash 5.2 answers a non-root user (expectations from
// it, run as nobody; the default values are the sandbox's own).
func TestUlimitUmask(t *testing.T) {
	tests := []struct{ in, out, stderr string }{
		{"ulimit -n 2000000; echo $?", "1\n", "ulimit: open files: cannot modify limit: Operation not permitted"},
		{"ulimit -Hn 100; echo $?; ulimit -Sn 200; ulimit -n", "1\n200\n", "ulimit: open files: cannot modify limit: Invalid argument"},
		{"ulimit -n abc; echo $?", "1\n", "ulimit: abc: invalid number"},
		{"ulimit -Z; echo $?", "2\n", "ulimit: -Z: invalid option\n" + ulimitUsage + "\n"},
		{"ulimit -f 100; ulimit -f; ulimit -Sf; ulimit -Hf; ulimit -f unlimited; echo $?", "100\n100\n100\n1\n", "file size: cannot modify limit: Operation not permitted"},
		{"ulimit -f 100; ulimit -n -f", "open files                          (-n) 1024\nfile size                   (blocks, -f) 100\n", ""},
		{"ulimit -c hard; ulimit -c; ulimit -t soft; echo $?", "unlimited\n0\n", ""},
		{"ulimit -p 4; echo $?", "1\n", "pipe size: cannot modify limit: Invalid argument"},
		{"(ulimit -n 50; ulimit -n); ulimit -n", "50\n1024\n", ""},
		{"ulimit -a | grep -c .; ulimit -u", "17\n256\n", ""},
		// each option takes its own value (rest of the word or the next
		// one); a trailing operand goes to the last option without one
		{"ulimit -f 8 -n 40 9; echo $?; ulimit -f -n", "0\nfile size                   (blocks, -f) 8\nopen files                          (-n) 40\n", ""},
		{"ulimit -f -n 40 -c 3; ulimit -n -c", "file size                   (blocks, -f) unlimited\nopen files                          (-n) 40\ncore file size              (blocks, -c) 3\n", ""},
		{"ulimit -fn 40; echo $?", "1\n", "ulimit: n: invalid number"},
		{"ulimit -n 40 -f x; echo $?; ulimit -n", "1\n40\n", "ulimit: x: invalid number"},
		{"ulimit -f -- 5; ulimit; ulimit -f -1; echo $?", "5\n2\n", "ulimit: -1: invalid option"},
		{"ulimit -f 7 -S -n 50; ulimit -Hf; ulimit -Hn; ulimit -n", "unlimited\n1048576\n50\n", ""},
		// ulimit -f: the write that passes it stores what fits; the writer
		// dies as of SIGXFSZ (153, no EXIT trap), the shell says so
		{"( ulimit -f 2; printf '%4096s' x > big; echo $? ); echo $?; wc -c < big", "153\n2048\n", "File size limit exceeded( ulimit -f 2; printf '%4096s' x >big; echo $? )"},
		{"( ulimit -f 1; head -c 4096 /dev/zero > b2 ); echo $?; wc -c < b2", "153\n1024\n", "File size limit exceededhead -c 4096 /dev/zero > b2"},
		{"(ulimit -f 1; echo hi > s; echo $?; head -c 1021 /dev/zero >> s; echo $?; echo x >> s; echo no); echo $?; wc -c < s", "0\n0\n153\n1024\n", "File size limit exceeded"},
		{"(ulimit -f 1; trap 'echo T' EXIT; seq 1000 > s; echo $?); wc -c < s", "153\nT\n1024\n", "exceededseq 1000 > s"},
		{"umask u=rwx,g=rx,o=; umask; umask g+w; umask; umask a-x; umask -S; umask -p; umask -p -S", "0027\n0007\nu=rw,g=rw,o=\numask 0117\numask -S u=rw,g=rw,o=\n", ""},
		{"umask 999; echo $?", "1\n", "umask: 999: octal number out of range"},
		{"umask u=q; echo $?; umask u%r; echo $?", "1\n1\n", "umask: `%': invalid symbolic mode operator"},
		{"umask -Z; echo $?", "2\n", "umask: -Z: invalid option\n" + umaskUsage + "\n"},
		{"umask 02 03; umask", "0002\n", ""},
		{"umask g-rx,o=; touch /tmp/um1; mkdir /tmp/umd; stat -c %a /tmp/um1 /tmp/umd", "600\n700\n", ""},
	}
	for _, tt := range tests {
		sh := newTestShell(t, Limits{})
		out, errs, _ := runScript(t, sh, tt.in)
		if out != tt.out || !strings.Contains(errs, tt.stderr) {
			t.Errorf("%q:\n got %q %q\nwant %q, stderr containing %q", tt.in, out, errs, tt.out, tt.stderr)
		}
	}
}

// ulimit -n holds redirections as the kernel holds bash (recorded from
// /usr/bin/bash).
func TestUlimitOpenFiles(t *testing.T) {
	in := "ulimit -n 8; exec 9>/tmp/of; echo $?; exec {v}>/tmp/of; echo $? $v; echo hi 9>/tmp/of; echo $?; exec 7>/tmp/of; echo $?"
	wantOut := "1\n1\n1\n0\n"
	wantErr := "bash: line 1: 9: Bad file descriptor\nbash: redirection error: cannot duplicate fd: Invalid argument\nbash: line 1: /tmp/of: Invalid argument\nbash: line 1: 9: Bad file descriptor\n"
	sh := newTestShell(t, Limits{})
	if out, errs, _ := runScript(t, sh, in); out != wantOut || errs != wantErr {
		t.Errorf("got %q %q, want %q %q", out, errs, wantOut, wantErr)
	}
}

// A file past the descriptor limit is opened, and created, before the
// descriptor fails, so a missing one is reported by name (recorded from
// /usr/bin/bash).
func TestUlimitOpenFilesOpensFirst(t *testing.T) {
	in := "cd /tmp; ulimit -n 8; exec 9>of9; echo $?; cat 9<nope; echo $?; exec 9<<<x; echo $?; ls of9"
	wantOut := "1\n1\n1\nof9\n"
	wantErr := "bash: line 1: 9: Bad file descriptor\nbash: line 1: nope: No such file or directory\nbash: line 1: 9: Bad file descriptor\n"
	sh := newTestShell(t, Limits{})
	if out, errs, _ := runScript(t, sh, in); out != wantOut || errs != wantErr {
		t.Errorf("got %q %q, want %q %q", out, errs, wantOut, wantErr)
	}
}
