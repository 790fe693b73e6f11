package shell

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

type builtinFunc func(r *runner, args []string) int

var builtins map[string]builtinFunc

var specialBuiltins = map[string]bool{":": true, ".": true, "break": true, "continue": true, "eval": true, "exec": true, "exit": true, "export": true, "readonly": true, "return": true, "set": true, "shift": true, "times": true, "trap": true, "unset": true, "source": false}

var keywords = []string{"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done", "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc"}

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
		"hash":      func(r *runner, a []string) int { return 0 },
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

func (r *runner) usageErr(name, msg string) int {
	r.errf("%s: %s", name, msg)
	return 2
}

// ---- echo / printf ----

func biEcho(r *runner, args []string) int {
	args = args[1:]
	nl, esc := true, r.shopts["xpg_echo"]
	for len(args) > 0 {
		a := args[0]
		if len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], "neE") != "" {
			break
		}
		for _, c := range a[1:] {
			switch c {
			case 'n':
				nl = false
			case 'e':
				esc = true
			case 'E':
				esc = false
			}
		}
		args = args[1:]
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if esc {
			s, stop := echoEscapes(a)
			b.WriteString(s)
			if stop {
				nl = false
				break
			}
		} else {
			b.WriteString(a)
		}
	}
	if nl {
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(r.stdout(), b.String()); err != nil {
		return r.writeErr("echo", err)
	}
	return 0
}

func (r *runner) writeErr(name string, err error) int {
	if err == errEPIPE || strings.Contains(err.Error(), "broken pipe") {
		return 141
	}
	if err == errCancelled {
		r.exiting = true
		return 1
	}
	r.errf("%s: write error: %s", name, errText(err))
	return 1
}

// echoEscapes interprets echo -e escapes; stop is true after \c.
func echoEscapes(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'c':
			return b.String(), true
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\':
			b.WriteByte('\\')
		case '0':
			n, j := 0, i+1
			for ; j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7'; j++ {
				n = n*8 + int(s[j]-'0')
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'x':
			n, j := 0, i+1
			for ; j < len(s) && j < i+3 && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteString("\\x")
			} else {
				b.WriteByte(byte(n))
			}
			i = j - 1
		case 'u', 'U':
			max := 4
			if s[i] == 'U' {
				max = 8
			}
			n, j := 0, i+1
			for ; j < len(s) && j < i+1+max && isHex(s[j]); j++ {
				n = n*16 + hexVal(s[j])
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(s[i])
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String(), false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

func biPrintf(r *runner, args []string) int {
	args = args[1:]
	varName := ""
	for len(args) > 0 {
		if args[0] == "-v" && len(args) > 1 {
			varName = args[1]
			args = args[2:]
			continue
		}
		if args[0] == "--" {
			args = args[1:]
		}
		break
	}
	if len(args) == 0 {
		r.errf("printf: usage: printf [-v var] format [arguments]")
		return 2
	}
	out, st := r.printf(args[0], args[1:])
	if varName != "" {
		if !r.setVar(varName, out) {
			return 1
		}
		return st
	}
	if _, err := io.WriteString(r.stdout(), out); err != nil {
		return r.writeErr("printf", err)
	}
	return st
}

// ---- cd / pwd / dirs ----

func biLet(r *runner, args []string) int {
	if len(args) < 2 {
		r.errf("let: expression expected")
		return 1
	}
	var n int64
	for _, a := range args[1:] {
		var err error
		n, err = r.arithString(a)
		if err != nil {
			r.arithCmdErr(err)
			return 1
		}
	}
	return b2i(n == 0)
}

func biEval(r *runner, args []string) int {
	if len(args) > 1 && args[1] == "--" {
		args = args[1:]
	} else if len(args) > 1 && strings.HasPrefix(args[1], "-") && len(args[1]) > 1 {
		r.errf("eval: %s: invalid option", args[1])
		r.errf("eval: usage: eval [arg ...]")
		return 2
	}
	src := strings.Join(args[1:], " ")
	if strings.TrimSpace(src) == "" {
		return 0
	}
	if r.callDepth >= r.rs.lim.MaxCallDepth {
		r.rs.fail(limitf("eval nesting limit exceeded (%d)", r.rs.lim.MaxCallDepth))
		r.exiting = true
		return 1
	}
	r.callDepth++
	r.status = 0
	// Like bash, the lines before a syntax error run (not the bad line's
	// other commands: bash parses a line whole), then eval returns 2.
	r.runText(src, "", false)
	r.callDepth--
	return r.status
}

func biSource(r *runner, args []string) int {
	if len(args) > 1 && args[1] == "--" {
		args = append([]string{args[0]}, args[2:]...)
	}
	if len(args) < 2 {
		r.errf("%s: filename argument required", args[0])
		return 2
	}
	name := args[1]
	p := name
	if !strings.Contains(name, "/") {
		if fp, ok := r.pathLookupAny(name); ok {
			p = fp
		}
	}
	data, err := r.readFileAll(p)
	if err != nil {
		r.errf("%s: %s", name, errText(err))
		return 1
	}
	if r.callDepth >= r.rs.lim.MaxCallDepth {
		r.rs.fail(limitf("source nesting limit exceeded (%d)", r.rs.lim.MaxCallDepth))
		r.exiting = true
		return 1
	}
	savedParams := r.params
	if len(args) > 2 {
		r.params = args[2:]
	}
	r.callDepth++
	r.srcNames = append(r.srcNames, name)
	r.funcNames = append(r.funcNames, "source")
	r.frames = append(r.frames, frame{name: "source", file: name, line: r.lineno})
	savedSrc, savedLine := r.curSrc, r.lineno
	r.curSrc = name
	r.status = 0
	r.runText(string(data), name, false)
	r.curSrc = savedSrc
	r.lineno = savedLine
	r.frames = r.frames[:len(r.frames)-1]
	r.funcNames = r.funcNames[:len(r.funcNames)-1]
	r.srcNames = r.srcNames[:len(r.srcNames)-1]
	r.callDepth--
	if r.returning {
		r.returning = false
	}
	if len(args) > 2 {
		r.params = savedParams
	}
	return r.status
}

func biExec(r *runner, args []string) int {
	args = args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if args[0] == "--" {
			args = args[1:]
			break
		}
		args = args[1:]
	}
	if len(args) == 0 {
		// redirections made permanent: the caller handles this by not
		// restoring (see stmt); nothing to do here.
		r.permRedir = true
		return 0
	}
	r.exec(args, nil)
	r.exiting = true
	return r.status
}

func biExit(r *runner, args []string) int {
	st := r.status
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil {
			r.errf("exit: %s: numeric argument required", args[1])
			st = 2
		} else {
			st = n & 255
		}
	}
	r.exiting = true
	r.exitCalled = true
	return st
}

func biReturn(r *runner, args []string) int {
	st := r.status
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil {
			r.errf("return: %s: numeric argument required", args[1])
			st = 2
		} else {
			st = n & 255
		}
	}
	if len(r.funcNames) == 0 {
		r.errf("return: can only `return' from a function or sourced script")
		return 1
	}
	r.returning = true
	return st
}

func loopN(r *runner, args []string, name string) (int, bool) {
	if len(args) > 2 {
		r.errf("%s: too many arguments", name)
		r.exiting = true
		return 0, false
	}
	n := 1
	if len(args) > 1 {
		v, err := strconv.Atoi(args[1])
		if err != nil || v < 1 {
			r.errf("%s: %s: loop count out of range", name, args[1])
			return 0, false
		}
		n = v
	}
	return n, true
}

func biBreak(r *runner, args []string) int {
	n, ok := loopN(r, args, "break")
	if !ok {
		return 1
	}
	if r.loopDepth == 0 {
		r.errf("break: only meaningful in a `for', `while', or `until' loop")
		return 0
	}
	r.breakN = n
	return 0
}

func biContinue(r *runner, args []string) int {
	n, ok := loopN(r, args, "continue")
	if !ok {
		return 1
	}
	if r.loopDepth == 0 {
		r.errf("continue: only meaningful in a `for', `while', or `until' loop")
		return 0
	}
	r.contN = n
	return 0
}

func biShift(r *runner, args []string) int {
	if len(args) > 2 {
		r.errf("shift: too many arguments")
		r.exiting = true
		return 1
	}
	n := 1
	if len(args) > 1 {
		v, err := strconv.Atoi(args[1])
		if err != nil || v < 0 {
			r.errf("shift: %s: numeric argument required", args[1])
			return 1
		}
		n = v
	}
	if n > len(r.params) {
		return 1
	}
	r.params = r.params[n:]
	return 0
}

// ---- set / shopt ----

func biSet(r *runner, args []string) int {
	args = args[1:]
	if len(args) == 0 {
		r.printVars(false)
		return 0
	}
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			r.params = append([]string(nil), args[1:]...)
			return 0
		}
		if a == "+" {
			args = args[1:]
			continue
		}
		if a == "-" {
			r.opts[optXtrace], r.opts[optVerbose] = false, false
			args = args[1:]
			if len(args) > 0 {
				r.params = append([]string(nil), args...)
			}
			return 0
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			r.params = append([]string(nil), args...)
			return 0
		}
		on := a[0] == '-'
		if a[1:] == "o" {
			if len(args) < 2 {
				r.printOpts(on)
				return 0
			}
			if !r.setOption(args[1], on) {
				r.errf("set: %s: invalid option name", args[1])
				return 1
			}
			args = args[2:]
			continue
		}
		for _, c := range a[1:] {
			if c == 'o' {
				continue
			}
			if !r.setFlag(byte(c), on) {
				r.errf("set: %c%c: invalid option", a[0], c)
				return 2
			}
		}
		args = args[1:]
	}
	return 0
}

func (r *runner) printOpts(minus bool) {
	names := make([]int, numOpts)
	for i := range names {
		names[i] = i
	}
	sort.Slice(names, func(a, b int) bool { return optNames[names[a]] < optNames[names[b]] })
	for _, i := range names {
		if minus {
			st := "off"
			if r.opts[i] {
				st = "on"
			}
			r.outf("%-15s\t%s\n", optNames[i], st)
		} else {
			c := "+o"
			if r.opts[i] {
				c = "-o"
			}
			r.outf("set %s %s\n", c, optNames[i])
		}
	}
}

func (r *runner) printVars(declareStyle bool) {
	seen := map[string]*Var{}
	for s := r.vars; s != nil; s = s.parent {
		for k, v := range s.vars {
			if _, ok := seen[k]; !ok {
				seen[k] = v
			}
		}
	}
	names := make([]string, 0, len(seen))
	for k, v := range seen {
		if v.Set {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		v := seen[n]
		switch v.Kind {
		case expand.Indexed, expand.Associative:
			r.out(n + "=" + arrayLiteral(v) + "\n")
		default:
			r.out(n + "=" + shellQuote(v.Str) + "\n")
		}
	}
	if !declareStyle {
		fnames := make([]string, 0, len(r.funcs))
		for k := range r.funcs {
			fnames = append(fnames, k)
		}
		sort.Strings(fnames)
		for _, f := range fnames {
			r.out(r.funcSource(f))
		}
	}
}

func (r *runner) funcSource(name string) string {
	body := r.funcs[name]
	var b strings.Builder
	b.WriteString(name + " () \n")
	pr := syntax.NewPrinter(syntax.Indent(4))
	blk, ok := body.Cmd.(*syntax.Block)
	if !ok || len(body.Redirs) > 0 {
		pr.Print(&b, body)
		b.WriteString("\n")
		return b.String()
	}
	b.WriteString("{ \n")
	for i, st := range blk.Stmts {
		var sb strings.Builder
		pr.Print(&sb, st)
		text := strings.TrimRight(sb.String(), "\n")
		lines := strings.Split(text, "\n")
		for j, l := range lines {
			b.WriteString("    " + l)
			if j < len(lines)-1 {
				b.WriteString("\n")
			}
		}
		if i < len(blk.Stmts)-1 && !strings.HasSuffix(text, "&") {
			b.WriteString(";")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func biShopt(r *runner, args []string) int {
	args = args[1:]
	set, unset, quiet, oMode, print := false, false, false, false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		for _, c := range args[0][1:] {
			switch c {
			case 's':
				set = true
			case 'u':
				unset = true
			case 'q':
				quiet = true
			case 'o':
				oMode = true
			case 'p':
				print = true
			default:
				r.errf("shopt: -%c: invalid option", c)
				return 2
			}
		}
		args = args[1:]
	}
	_ = print
	if len(args) == 0 {
		names := shoptNames
		if oMode {
			names = optNames[:]
		}
		sorted := slices.Clone(names)
		sort.Strings(sorted)
		for _, n := range sorted {
			on := r.shopts[n]
			if oMode {
				on = r.optByName(n)
			}
			if (set && !on) || (unset && on) {
				continue
			}
			r.shoptLine(n, on, oMode, print)
		}
		return 0
	}
	st := 0
	for _, n := range args {
		if oMode {
			valid := slices.Contains(optNames[:], n)
			if !valid {
				r.errf("shopt: %s: invalid option name", n)
				st = 1
				continue
			}
			if set || unset {
				r.setOption(n, set)
				continue
			}
			on := r.optByName(n)
			if !quiet {
				r.shoptLine(n, on, true, print)
			}
			if !on {
				st = 1
			}
			continue
		}
		if !slices.Contains(shoptNames, n) {
			r.errf("shopt: %s: invalid shell option name", n)
			st = 1
			continue
		}
		if set || unset {
			r.setShopt(n, set)
			continue
		}
		on := r.shopts[n]
		if !quiet {
			r.shoptLine(n, on, false, print)
		}
		if !on {
			st = 1
		}
	}
	return st
}

func (r *runner) optByName(n string) bool {
	for i, o := range optNames {
		if o == n {
			return r.opts[i]
		}
	}
	return false
}

// ---- type / command / builtin ----

func biUmask(r *runner, args []string) int {
	args = args[1:]
	sym := false
	if len(args) > 0 && args[0] == "-S" {
		sym = true
		args = args[1:]
	}
	if len(args) == 0 {
		if sym {
			m := ^r.umask & 0o777
			f := func(s uint32) string {
				out := ""
				if s&4 != 0 {
					out += "r"
				}
				if s&2 != 0 {
					out += "w"
				}
				if s&1 != 0 {
					out += "x"
				}
				return out
			}
			r.outf("u=%s,g=%s,o=%s\n", f(m>>6), f(m>>3&7), f(m&7))
			return 0
		}
		r.outf("%04o\n", r.umask)
		return 0
	}
	n, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		r.errf("umask: %s: octal number out of range", args[0])
		return 1
	}
	r.umask = uint32(n) & 0o777
	return 0
}

func biUlimit(r *runner, args []string) int {
	lim := r.rs.lim
	all := len(args) > 1 && args[1] == "-a"
	if all {
		r.outf("core file size          (blocks, -c) 0\n")
		r.outf("file size               (blocks, -f) unlimited\n")
		r.outf("max user processes              (-u) %d\n", lim.MaxJobs)
		r.outf("stack size              (kbytes, -s) 8192\n")
		r.outf("cpu time               (seconds, -t) %d\n", int(lim.Timeout.Seconds()))
		return 0
	}
	if len(args) > 1 && args[1] == "-u" {
		r.outf("%d\n", lim.MaxJobs)
		return 0
	}
	if len(args) > 1 && args[1] == "-t" {
		r.outf("%d\n", int(lim.Timeout.Seconds()))
		return 0
	}
	r.out("unlimited\n")
	return 0
}

func biCaller(r *runner, args []string) int {
	if len(r.funcNames) == 0 {
		return 1
	}
	caller := "main"
	if len(r.funcNames) > 1 {
		caller = r.funcNames[len(r.funcNames)-2]
	}
	r.outf("%d %s\n", r.lineno, caller)
	return 0
}

func biCompgen(r *runner, args []string) int {
	args = args[1:]
	var cands []string
	prefix := ""
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-W":
			if i+1 < len(args) {
				i++
				fs, _ := r.fieldsFromString(args[i])
				cands = append(cands, fs...)
			}
		case "-A", "-a", "-b", "-c", "-f", "-v", "-k", "-e":
			kind := args[i][1:]
			if args[i] == "-A" && i+1 < len(args) {
				i++
				kind = args[i]
			}
			switch kind {
			case "v", "variable":
				for s := r.vars; s != nil; s = s.parent {
					for k := range s.vars {
						cands = append(cands, k)
					}
				}
			case "function":
				for k := range r.funcs {
					cands = append(cands, k)
				}
			case "b", "builtin":
				for k := range builtins {
					cands = append(cands, k)
				}
			case "k", "keyword":
				cands = append(cands, keywords...)
			case "a", "alias":
				for k := range r.aliases {
					cands = append(cands, k)
				}
			case "c", "command":
				for k := range builtins {
					cands = append(cands, k)
				}
				for k := range r.funcs {
					cands = append(cands, k)
				}
				for k := range r.sh.cfg.Commands {
					cands = append(cands, k)
				}
			case "e", "export":
				for _, kv := range r.environ() {
					k, _, _ := strings.Cut(kv, "=")
					cands = append(cands, k)
				}
			}
		default:
			prefix = args[i]
		}
	}
	sort.Strings(cands)
	cands = slices.Compact(cands)
	st := 1
	for _, c := range cands {
		if strings.HasPrefix(c, prefix) {
			r.out(c + "\n")
			st = 0
		}
	}
	return st
}

func (r *runner) fieldsFromString(s string) ([]string, bool) {
	ws, err := parseWords(s)
	if err != nil {
		return strings.Fields(s), true
	}
	return r.fields(ws...)
}

func biHelp(r *runner, args []string) int {
	if len(args) > 1 && args[1] == "--" {
		args = append([]string{args[0]}, args[2:]...)
	}
	names := make([]string, 0, len(builtins))
	for k := range builtins {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(args) > 1 {
		if _, ok := builtins[args[1]]; ok {
			r.outf("%s: %s [args]\n    The %s shell builtin (warren).\n", args[1], args[1], args[1])
			return 0
		}
		r.errf("help: no help topics match `%s'.  Try `help help' or `man -k %s' or `info %s'.", args[1], args[1], args[1])
		return 1
	}
	r.out("warren bash-compatible shell. Builtins:\n")
	r.out(strings.Join(names, " ") + "\n")
	return 0
}

func biUnset(r *runner, args []string) int {
	args = args[1:]
	mode := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		switch args[0] {
		case "-v", "-f", "-n":
			mode = args[0]
		default:
			r.errf("unset: %s: invalid option", args[0])
			return 2
		}
		args = args[1:]
	}
	st := 0
	for _, name := range args {
		if mode == "-f" {
			r.own()
			delete(r.funcs, name)
			continue
		}
		base := name
		if i := strings.IndexByte(name, '['); i > 0 {
			base = name[:i]
		}
		if !syntax.ValidName(base) {
			r.errf("unset: `%s': not a valid identifier", name)
			st = 1
			continue
		}
		if mode == "-n" {
			r.own()
			for s := r.vars; s != nil; s = s.parent {
				if _, ok := s.vars[name]; ok {
					delete(s.vars, name)
					break
				}
			}
			continue
		}
		if mode == "" && r.lookup(base) == nil {
			if _, ok := r.funcs[name]; ok {
				r.own()
				delete(r.funcs, name)
				continue
			}
		}
		if !r.unsetVar(name) {
			st = 1
		}
	}
	return st
}

func biAlias(r *runner, args []string) int {
	args = args[1:]
	if len(args) > 0 && args[0] == "-p" {
		args = args[1:]
	}
	if len(args) == 0 {
		names := make([]string, 0, len(r.aliases))
		for k := range r.aliases {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, n := range names {
			r.outf("alias %s=%s\n", n, shellQuote(r.aliases[n]))
		}
		return 0
	}
	st := 0
	for _, a := range args {
		name, val, ok := strings.Cut(a, "=")
		if !ok {
			if v, ok := r.aliases[name]; ok {
				r.outf("alias %s=%s\n", name, shellQuote(v))
			} else {
				r.errf("alias: %s: not found", name)
				st = 1
			}
			continue
		}
		r.own()
		if r.aliases == nil {
			r.aliases = map[string]string{}
		}
		r.aliases[name] = val
	}
	return st
}

func biUnalias(r *runner, args []string) int {
	st := 0
	for _, a := range args[1:] {
		if a == "-a" {
			r.own()
			r.aliases = map[string]string{}
			continue
		}
		if _, ok := r.aliases[a]; !ok {
			r.errf("unalias: %s: not found", a)
			st = 1
			continue
		}
		r.own()
		delete(r.aliases, a)
	}
	return st
}

// shellQuote quotes s as bash's declare -p / alias / trap do.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	needs := false
	for _, c := range s {
		if !(c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == ',' || c == '+' || c == '@' || c == '%' || c == '=' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			needs = true
			break
		}
	}
	if !needs {
		return s
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return ansiQuote(s)
		}
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func biGetopts(r *runner, args []string) int {
	if len(args) >= 3 && !validRef(args[2]) {
		// still advance OPTIND/OPTARG, as bash does, but assign to a scratch name
		fixed := append([]string{args[0], args[1], "_warren_getopts_scratch"}, args[3:]...)
		biGetopts(r, fixed)
		r.unsetVar("_warren_getopts_scratch")
		r.errf("getopts: `%s': not a valid identifier", args[2])
		return 1
	}
	if len(args) < 3 {
		r.errf("getopts: usage: getopts optstring name [arg ...]")
		return 2
	}
	optstr, name := args[1], args[2]
	params := r.params
	if len(args) > 3 {
		params = args[3:]
	}
	silent := strings.HasPrefix(optstr, ":")
	if silent {
		optstr = optstr[1:]
	}
	optind := 1
	if v := r.lookup("OPTIND"); v != nil {
		if n, err := strconv.Atoi(v.str()); err == nil && n > 0 {
			optind = n
		}
	}
	if optind != r.goptInd {
		r.optind = 0
	}
	done := func() int {
		r.setVar(name, "?")
		r.unsetVar("OPTARG")
		r.setVar("OPTIND", strconv.Itoa(optind))
		r.goptInd = optind
		r.optind = 0
		return 1
	}
	if optind-1 > len(params) {
		optind = 1
	}
	if optind-1 >= len(params) {
		return done()
	}
	arg := params[optind-1]
	if r.optind == 0 {
		if arg == "--" {
			optind++
			return done()
		}
		if len(arg) < 2 || arg[0] != '-' {
			return done()
		}
		r.optind = 1
	}
	c := arg[r.optind]
	r.optind++
	advance := func() {
		if r.optind >= len(arg) {
			optind++
			r.optind = 0
		}
	}
	i := strings.IndexByte(optstr, c)
	st := 0
	if i < 0 || c == ':' {
		if silent {
			r.setVar("OPTARG", string(c))
		} else {
			fmt.Fprintf(r.stderr(), "%s: illegal option -- %c\n", r.arg0, c)
			r.unsetVar("OPTARG")
		}
		r.setVar(name, "?")
		advance()
	} else if i+1 < len(optstr) && optstr[i+1] == ':' {
		switch {
		case r.optind < len(arg):
			r.setVar("OPTARG", arg[r.optind:])
			optind++
			r.optind = 0
			r.setVar(name, string(c))
		case optind < len(params):
			r.setVar("OPTARG", params[optind])
			optind += 2
			r.optind = 0
			r.setVar(name, string(c))
		default:
			if silent {
				r.setVar(name, ":")
				r.setVar("OPTARG", string(c))
			} else {
				fmt.Fprintf(r.stderr(), "%s: option requires an argument -- %c\n", r.arg0, c)
				r.setVar(name, "?")
				r.unsetVar("OPTARG")
			}
			optind++
			r.optind = 0
		}
	} else {
		r.setVar(name, string(c))
		r.unsetVar("OPTARG")
		advance()
	}
	r.setVar("OPTIND", strconv.Itoa(optind))
	r.goptInd = optind
	if !validRef(name) {
		r.errf("getopts: `%s': not a valid identifier", name)
		return 1
	}
	return st
}

func (r *runner) shoptLine(n string, on, oMode, print bool) {
	if print {
		switch {
		case oMode && on:
			r.outf("set -o %s\n", n)
		case oMode:
			r.outf("set +o %s\n", n)
		case on:
			r.outf("shopt -s %s\n", n)
		default:
			r.outf("shopt -u %s\n", n)
		}
		return
	}
	st := "off"
	if on {
		st = "on"
	}
	r.outf("%-15s\t%s\n", n, st)
}
