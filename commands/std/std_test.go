package std

import "testing"

// TestTableComplete checks that every command of issue 4 is registered.
func TestTableComplete(t *testing.T) {
	want := []string{
		// files
		"cat", "ls", "cp", "mv", "rm", "mkdir", "rmdir", "touch", "ln", "chmod", "chown", "stat", "readlink",
		"realpath", "basename", "dirname", "mktemp", "truncate", "du", "df", "tree", "file", "install", "split",
		"mkfifo", "find", "xargs",
		// text
		"echo", "printf", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "paste", "join", "comm", "column",
		"nl", "rev", "tac", "fold", "expand", "unexpand", "fmt", "od", "xxd", "hexdump", "strings", "seq", "shuf",
		"yes", "tee", "expr", "diff", "patch", "cmp",
		// search and edit
		"grep", "egrep", "fgrep", "sed", "awk", "jq",
		// archives and hashes
		"tar", "gzip", "gunzip", "zcat", "bzip2", "bunzip2", "bzcat", "zip", "unzip", "base64", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum",
		// system
		"env", "printenv", "date", "sleep", "timeout", "id", "whoami", "hostname", "uname", "nproc", "uptime",
		"ps", "kill", "which", "true", "false", "test", "[",
		// git and network
		"git", "curl", "wget",
	}
	tab := Table()
	for _, n := range want {
		if tab[n] == nil {
			t.Errorf("%s is not registered", n)
		}
	}
}
