package shell

// The builtin table and the helpers several builtins share. The builtins
// live by family in builtins_*.go, and beside what they drive in
// declare.go, jobs.go, test.go, textbuiltins.go (read, mapfile) and
// tty.go (stty).

import (
	"errors"
	"strings"
)

// builtinFunc runs a builtin in the current shell: args[0] is the name it
// was called by, the result is its exit status.
type builtinFunc func(r *runner, args []string) int

// builtins maps each builtin's name to its function. It is filled in init:
// some builtins (compgen, help, type) read it, so an initialiser here
// would be an initialisation cycle.
var builtins map[string]builtinFunc

// specialBuiltins marks the POSIX special builtins (POSIX mode ends the
// shell on an assignment error before one with 127).
var specialBuiltins = map[string]bool{":": true, ".": true, "break": true, "continue": true, "eval": true, "exec": true, "exit": true, "export": true, "readonly": true, "return": true, "set": true, "shift": true, "times": true, "trap": true, "unset": true, "source": false}

// keywords are the reserved words, for type, command -v, compgen -k and
// Classify.
var keywords = []string{"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc"}

// init fills builtins (see there why it is not an initialiser).
func init() {
	builtins = map[string]builtinFunc{
		":":         func(r *runner, a []string) int { return 0 },
		"true":      func(r *runner, a []string) int { return 0 },
		"false":     func(r *runner, a []string) int { return 1 },
		"echo":      biEcho,
		"printf":    biPrintf,
		"read":      biRead,
		"mapfile":   biMapfile,
		"readarray": biMapfile,
		"cd":        biCd,
		"pwd":       biPwd,
		"pushd":     biPushd,
		"popd":      biPopd,
		"dirs":      biDirs,
		"test":      biTest,
		"[":         biTest,
		"let":       biLet,
		"eval":      biEval,
		"source":    biSource,
		".":         biSource,
		"exec":      biExec,
		"exit":      biExit,
		"return":    biReturn,
		"break":     biBreak,
		"continue":  biContinue,
		"shift":     biShift,
		"set":       biSet,
		"shopt":     biShopt,
		"getopts":   biGetopts,
		"type":      biType,
		"command":   biCommand,
		"builtin":   biBuiltin,
		"hash":      biHash,
		"trap":      biTrap,
		"wait":      biWait,
		"kill":      biKill,
		"jobs":      biJobs,
		"umask":     biUmask,
		"ulimit":    biUlimit,
		"times":     func(r *runner, a []string) int { r.out("0m0.000s 0m0.000s\n0m0.000s 0m0.000s\n"); return 0 },
		"caller":    biCaller,
		"compgen":   biCompgen,
		"complete":  biComplete,
		"compopt":   biCompopt,
		"enable":    func(r *runner, a []string) int { return 0 },
		"help":      biHelp,
		"declare":   func(r *runner, a []string) int { return r.declareArgs(a) },
		"typeset":   func(r *runner, a []string) int { return r.declareArgs(a) },
		"local":     func(r *runner, a []string) int { return r.declareArgs(a) },
		"export":    func(r *runner, a []string) int { return r.declareArgs(a) },
		"readonly":  func(r *runner, a []string) int { return r.declareArgs(a) },
		"unset":     biUnset,
		"alias":     biAlias,
		"unalias":   biUnalias,
		"disown":    biDisown,
		"nohup":     biNohup,
		"setsid":    biSetsid,
		"suspend":   func(r *runner, a []string) int { return 0 },
		"logout":    biExit,
		"fg":        func(r *runner, a []string) int { r.errf("fg: no job control"); return 1 },
		"bg":        func(r *runner, a []string) int { r.errf("bg: no job control"); return 1 },
	}
}

// usageErr reports a misuse of name with bash's usage status, 2. Nothing
// calls it yet.
func (r *runner) usageErr(name, msg string) int {
	r.errf("%s: %s", name, msg)
	return 2
}

// writeErr turns a builtin's failed write into its status: 141 on a closed
// pipe (128+SIGPIPE, what a real command dying of it reports), 1 and the
// end of the run when the run is cancelled, else 1 with bash's message.
func (r *runner) writeErr(name string, err error) int {
	if err == errEPIPE || strings.Contains(err.Error(), "broken pipe") {
		return 141
	}
	if err == errCancelled {
		r.exiting = true
		return 1
	}
	if errors.Is(err, errFileSize) {
		// SIGXFSZ: the shell itself wrote past ulimit -f, and dies of it
		r.xfsz, r.exiting = true, true
		return xfszStatus
	}
	r.errf("%s: write error: %s", name, errText(err))
	return 1
}
