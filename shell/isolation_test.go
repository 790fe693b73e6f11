package shell

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// Scripts that probe the host must see only the sandbox.
func TestIsolation(t *testing.T) {
	hostname, _ := os.Hostname()
	wd, _ := os.Getwd()
	secrets := []string{strconv.Itoa(os.Getpid()), wd, "/root/go", "GOPATH", "GOROOT"}
	if hostname != "" && hostname != "sandbox" {
		secrets = append(secrets, hostname)
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) > 6 && k != "TERM" && k != "SHELL" && k != "PATH" && k != "HOME" && k != "USER" && k != "LOGNAME" && k != "PWD" && k != "SHLVL" && k != "OLDPWD" {
			secrets = append(secrets, v)
		}
	}
	probes := []string{
		`echo $$ $PPID $BASHPID`,
		`type ls; type -a sh; command -v sh; command -v bash`,
		`cat /proc/self/environ | tr '\0' '\n'`,
		`ls /proc /sys /dev`,
		`cd /../../..; pwd; ls`,
		`printenv; env; set; declare -p; export -p`,
		`readlink /proc/self/exe; cat /proc/self/cmdline; cat /proc/self/status`,
		`exec /bin/sh -c 'echo $$'`,
		`echo ~root ~nobody ~; hostname; whoami; uname -a`,
		`ls -la /; cat /etc/passwd; echo /*`,
		`ulimit -a; umask; echo $HOSTNAME $UID $EUID`,
		`cat /dev/stdin </dev/null; echo $SHELL $BASH`,
	}
	sh := newTestShell(t, Limits{})
	for _, p := range probes {
		out, errs, _ := runScript(t, sh, p)
		for _, s := range secrets {
			if s == "" || len(s) < 3 {
				continue
			}
			if strings.Contains(out, s) || strings.Contains(errs, s) {
				t.Errorf("probe %q revealed host value %q:\n%s%s", p, s, out, errs)
			}
		}
	}
	out, _, _ := runScript(t, sh, `echo $$`)
	if pid, _ := strconv.Atoi(strings.TrimSpace(out)); pid <= 0 || pid > 100000 {
		t.Errorf("$$ = %q, want a small sandbox pid", out)
	}
}
