package diff

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/internal/getopt"
	"github.com/warren-sandbox/warren/commands/internal/textio"
	"github.com/warren-sandbox/warren/vfs"
)

func pathMatch(pattern, name string) (bool, error) { return path.Match(pattern, name) }

// byteWord is what cmp calls a position: "char" in the C locale, "byte" in others.
func byteWord(inv *commands.Invocation) string {
	loc := ""
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := inv.Getenv(k); v != "" {
			loc = v
			break
		}
	}
	if loc == "" || loc == "C" || loc == "POSIX" {
		return "char"
	}
	return "byte"
}

var patchSpec = getopt.Spec{Short: "p:Ri:d:NEfso:ub", Long: []getopt.Long{
	{Name: "strip", Arg: getopt.Required, Key: "p"}, {Name: "reverse", Key: "R"}, {Name: "input", Arg: getopt.Required, Key: "i"},
	{Name: "directory", Arg: getopt.Required, Key: "d"}, {Name: "forward", Key: "N"}, {Name: "remove-empty-files", Key: "E"},
	{Name: "force", Key: "f"}, {Name: "silent", Key: "s"}, {Name: "quiet", Key: "s"}, {Name: "dry-run"},
	{Name: "output", Arg: getopt.Required, Key: "o"}, {Name: "unified", Key: "u"}, {Name: "backup", Key: "b"},
	{Name: "no-backup-if-mismatch"}, {Name: "batch", Key: "t"},
}}

type filePatch struct {
	oldName, newName string
	hunks            []phunk
}

type phunk struct {
	oldStart, oldLen, newStart, newLen int
	lines                              []string // with their ' ', '-', '+' prefix
	noEOLOld, noEOLNew                 bool
}

// Patch is patch(1) for unified diffs.
func Patch(ctx context.Context, inv *commands.Invocation) int {
	opts, operands, err := patchSpec.Parse(inv.Args[1:])
	if err != nil {
		return inv.BadUsage(err, getopt.UsageText("patch", err), 2)
	}
	strip := -1
	reverse, dry, silent := false, false, false
	input, dir, output := "", "", ""
	for _, o := range opts {
		switch o.Key {
		case "p":
			n, err := strconv.Atoi(o.Arg)
			if err != nil || n < 0 {
				fmt.Fprintf(inv.Stderr, "patch: strip count %s is not a number\n", o.Arg)
				return 2
			}
			strip = n
		case "R":
			reverse = true
		case "i":
			input = o.Arg
		case "d":
			dir = o.Arg
		case "dry-run":
			dry = true
		case "s":
			silent = true
		case "o":
			output = o.Arg
		}
	}
	target := ""
	if len(operands) > 0 {
		target = operands[0]
	}
	if len(operands) > 1 {
		input = operands[1]
	}
	var src io.Reader = inv.Stdin
	if input != "" && input != "-" {
		f, err := inv.Open(input)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "patch: can't open patch file %s: %s\n", input, commands.Strerror(unwrap(err)))
			return 2
		}
		defer f.Close()
		src = f
	}
	data, err := io.ReadAll(io.LimitReader(textio.WithContext(ctx, src), maxInput))
	if err != nil {
		fmt.Fprintf(inv.Stderr, "patch: read error: %s\n", commands.Strerror(err))
		return 2
	}
	patches, err := parsePatch(string(data))
	if err != nil {
		fmt.Fprintf(inv.Stderr, "patch: %s\n", err)
		return 2
	}
	if len(patches) == 0 {
		fmt.Fprintln(inv.Stderr, "patch: **** Only garbage was found in the patch input.")
		return 2
	}
	out := textio.NewWriter(inv.Stdout)
	defer textio.PutWriter(out)
	defer out.Flush()
	status := 0
	base := inv.Dir
	if dir != "" {
		base = inv.Abs(dir)
	}
	sub := *inv
	sub.Dir = base
	for _, fp := range patches {
		if reverse {
			fp = reversePatch(fp)
		}
		name := target
		if name == "" {
			name = chooseName(&sub, fp, strip)
			if dangerous(name) {
				// As GNU patch: names from the diff may not climb out.
				fmt.Fprintf(inv.Stderr, "patch: **** Ignoring potentially dangerous file name %s\n", name)
				status = max(status, 1)
				continue
			}
		}
		if name == "" {
			fmt.Fprintln(inv.Stderr, "patch: can't find file to patch")
			status = max(status, 1)
			continue
		}
		creating := fp.oldName == "/dev/null"
		deleting := fp.newName == "/dev/null"
		var orig []byte
		if !creating {
			f, err := sub.Open(name)
			if err != nil {
				fmt.Fprintf(inv.Stderr, "patch: can't open %s: %s\n", name, commands.Strerror(unwrap(err)))
				status = 2
				continue
			}
			orig, err = io.ReadAll(io.LimitReader(f, maxInput))
			f.Close()
			if err != nil {
				fmt.Fprintf(inv.Stderr, "patch: read error on %s: %s\n", name, commands.Strerror(err))
				status = 2
				continue
			}
		}
		verb := "patching file"
		if dry {
			verb = "checking file"
		}
		if !silent {
			fmt.Fprintf(out, "%s %s\n", verb, name)
		}
		result, msgs, failed := applyHunks(orig, fp.hunks)
		for _, m := range msgs {
			if !silent {
				fmt.Fprintln(out, m)
			}
		}
		if failed > 0 {
			fmt.Fprintf(out, "%d out of %d hunk%s FAILED", failed, len(fp.hunks), plural(len(fp.hunks)))
			if !dry {
				rej := name + ".rej"
				fmt.Fprintf(out, " -- saving rejects to file %s\n", rej)
				writeFile(&sub, rej, []byte(rejectText(fp, name)))
			} else {
				fmt.Fprintln(out)
			}
			status = max(status, 1)
			continue
		}
		if dry {
			continue
		}
		dest := name
		if output != "" {
			dest = output
		}
		if deleting && len(result) == 0 && output == "" {
			if err := sub.FS.Remove(sub.Abs(dest)); err != nil {
				fmt.Fprintf(inv.Stderr, "patch: can't remove %s: %s\n", dest, commands.Strerror(unwrap(err)))
				status = 2
			}
			continue
		}
		if creating {
			if d := path.Dir(sub.Abs(dest)); d != "/" {
				sub.FS.MkdirAll(d, 0o755)
			}
		}
		if err := writeFile(&sub, dest, result); err != nil {
			fmt.Fprintf(inv.Stderr, "patch: can't write %s: %s\n", dest, commands.Strerror(unwrap(err)))
			status = 2
		}
	}
	return status
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func writeFile(inv *commands.Invocation, name string, data []byte) error {
	f, err := inv.OpenFile(name, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func stripPath(p string, n int) string {
	if n < 0 {
		return p
	}
	for i := 0; i < n; i++ {
		j := strings.IndexByte(p, '/')
		if j < 0 {
			return p
		}
		p = p[j+1:]
	}
	return p
}

// chooseName picks the file to patch like GNU patch: with -pN the stripped
// name; without, the existing one of old/new names (basename last).
func chooseName(inv *commands.Invocation, fp filePatch, strip int) string {
	cands := []string{}
	for _, n := range []string{fp.oldName, fp.newName} {
		if n != "/dev/null" && n != "" {
			cands = append(cands, n)
		}
	}
	if strip >= 0 {
		for _, c := range cands {
			s := stripPath(c, strip)
			if exists(inv, s) || fp.oldName == "/dev/null" {
				return s
			}
		}
		if len(cands) > 0 {
			return stripPath(cands[0], strip)
		}
		return ""
	}
	for _, c := range cands {
		if exists(inv, c) {
			return c
		}
	}
	for _, c := range cands {
		if b := path.Base(c); exists(inv, b) {
			return b
		}
	}
	if fp.oldName == "/dev/null" && len(cands) > 0 {
		return cands[0]
	}
	return ""
}

func dangerous(name string) bool {
	if strings.HasPrefix(name, "/") {
		return true
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

func exists(inv *commands.Invocation, name string) bool {
	if inv.FS == nil {
		return false
	}
	_, err := inv.FS.Stat(inv.Abs(name))
	return err == nil
}

func headerName(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return s
}

func parsePatch(text string) ([]filePatch, error) {
	lines := strings.SplitAfter(text, "\n")
	var out []filePatch
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "--- ") || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "+++ ") {
			continue
		}
		fp := filePatch{oldName: headerName(l[4:]), newName: headerName(lines[i+1][4:])}
		i += 2
		for i < len(lines) && strings.HasPrefix(lines[i], "@@ ") {
			h, err := parseHunkHeader(lines[i])
			if err != nil {
				return nil, err
			}
			i++
			oldSeen, newSeen := 0, 0
			for i < len(lines) && (oldSeen < h.oldLen || newSeen < h.newLen) {
				l := strings.TrimSuffix(lines[i], "\n")
				if l == "" {
					l = " " // some tools drop the space of empty context lines
				}
				switch l[0] {
				case ' ':
					oldSeen++
					newSeen++
				case '-':
					oldSeen++
				case '+':
					newSeen++
				case '\\':
					i++
					continue
				default:
					return nil, fmt.Errorf("malformed patch at line %d: %s", i+1, l)
				}
				h.lines = append(h.lines, l)
				i++
			}
			// "\ No newline at end of file" markers after the hunk body.
			for i < len(lines) && strings.HasPrefix(lines[i], "\\") {
				last := h.lines[len(h.lines)-1]
				if last[0] == '-' {
					h.noEOLOld = true
				} else if last[0] == '+' {
					h.noEOLNew = true
				} else {
					h.noEOLOld, h.noEOLNew = true, true
				}
				i++
			}
			fp.hunks = append(fp.hunks, h)
		}
		i--
		out = append(out, fp)
	}
	return out, nil
}

func parseHunkHeader(l string) (phunk, error) {
	var h phunk
	f := strings.Fields(l)
	if len(f) < 3 {
		return h, fmt.Errorf("malformed hunk header: %s", strings.TrimSpace(l))
	}
	parse := func(s string) (int, int, error) {
		a, b, ok := strings.Cut(s[1:], ",")
		start, err := strconv.Atoi(a)
		if err != nil {
			return 0, 0, err
		}
		n := 1
		if ok {
			if n, err = strconv.Atoi(b); err != nil {
				return 0, 0, err
			}
		}
		return start, n, nil
	}
	var err error
	if h.oldStart, h.oldLen, err = parse(f[1]); err != nil {
		return h, fmt.Errorf("malformed hunk header: %s", strings.TrimSpace(l))
	}
	if h.newStart, h.newLen, err = parse(f[2]); err != nil {
		return h, fmt.Errorf("malformed hunk header: %s", strings.TrimSpace(l))
	}
	return h, nil
}

func reversePatch(fp filePatch) filePatch {
	r := filePatch{oldName: fp.newName, newName: fp.oldName}
	for _, h := range fp.hunks {
		rh := phunk{oldStart: h.newStart, oldLen: h.newLen, newStart: h.oldStart, newLen: h.oldLen,
			noEOLOld: h.noEOLNew, noEOLNew: h.noEOLOld}
		for _, l := range h.lines {
			switch l[0] {
			case '-':
				rh.lines = append(rh.lines, "+"+l[1:])
			case '+':
				rh.lines = append(rh.lines, "-"+l[1:])
			default:
				rh.lines = append(rh.lines, l)
			}
		}
		r.hunks = append(r.hunks, rh)
	}
	return r
}

// applyHunks applies hunks in order, searching near the stated position.
func applyHunks(orig []byte, hs []phunk) ([]byte, []string, int) {
	lines := strings.SplitAfter(string(orig), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var msgs []string
	failed := 0
	offset := 0
	for n, h := range hs {
		var old, repl []string
		for _, l := range h.lines {
			switch l[0] {
			case ' ':
				old = append(old, l[1:])
				repl = append(repl, l[1:])
			case '-':
				old = append(old, l[1:])
			case '+':
				repl = append(repl, l[1:])
			}
		}
		want := h.oldStart - 1 + offset
		if h.oldLen == 0 {
			want = h.oldStart + offset
		}
		pos := -1
		for delta := 0; delta <= len(lines); delta++ {
			for _, p := range []int{want - delta, want + delta} {
				if p >= 0 && p+len(old) <= len(lines) && matchAt(lines, p, old) {
					pos = p
					break
				}
			}
			if pos >= 0 {
				break
			}
		}
		if pos < 0 {
			failed++
			msgs = append(msgs, fmt.Sprintf("Hunk #%d FAILED at %d.", n+1, h.oldStart))
			continue
		}
		if pos != want {
			d := pos - want
			msgs = append(msgs, fmt.Sprintf("Hunk #%d succeeded at %d (offset %d line%s).", n+1, pos+1, d, plural(abs(d))))
		}
		var newLines []string
		for i, r := range repl {
			s := r + "\n"
			if i == len(repl)-1 && h.noEOLNew && pos+len(old) >= len(lines) {
				s = r
			}
			newLines = append(newLines, s)
		}
		tail := append([]string(nil), lines[pos+len(old):]...)
		lines = append(append(lines[:pos], newLines...), tail...)
		offset += len(repl) - len(old) + (pos - want)
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
	}
	return b.Bytes(), msgs, failed
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func matchAt(lines []string, p int, old []string) bool {
	for i, o := range old {
		if strings.TrimSuffix(lines[p+i], "\n") != o {
			return false
		}
	}
	return true
}

func rejectText(fp filePatch, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", name, name)
	for _, h := range fp.hunks {
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.oldStart, h.oldLen, h.newStart, h.newLen)
		for _, l := range h.lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

var cmpSpec = getopt.Spec{Short: "lsbn:i:", Long: []getopt.Long{
	{Name: "verbose", Key: "l"}, {Name: "silent", Key: "s"}, {Name: "quiet", Key: "s"},
	{Name: "print-bytes", Key: "b"}, {Name: "bytes", Arg: getopt.Required, Key: "n"}, {Name: "ignore-initial", Arg: getopt.Required, Key: "i"}}}

// Cmp is cmp(1).
func Cmp(ctx context.Context, inv *commands.Invocation) int {
	opts, operands, err := cmpSpec.Parse(inv.Args[1:])
	if err != nil {
		return inv.BadUsage(err, getopt.UsageText("cmp", err), 2)
	}
	verbose, silent := false, false
	var limit int64 = -1
	for _, o := range opts {
		switch o.Key {
		case "l":
			verbose = true
		case "s":
			silent = true
		case "n":
			n, err := strconv.ParseInt(o.Arg, 10, 64)
			if err != nil || n < 0 {
				fmt.Fprintf(inv.Stderr, "cmp: invalid --bytes value '%s'\n", o.Arg)
				return 2
			}
			limit = n
		}
	}
	if len(operands) == 0 {
		fmt.Fprintf(inv.Stderr, "cmp: missing operand after 'cmp'\ncmp: Try 'cmp --help' for more information.\n")
		return 2
	}
	if len(operands) == 1 {
		operands = append(operands, "-")
	}
	a, b := operands[0], operands[1]
	fa, err := inv.Open(a)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "cmp: %s\n", commands.Describe(err))
		return 2
	}
	defer fa.Close()
	fb, err := inv.Open(b)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "cmp: %s\n", commands.Describe(err))
		return 2
	}
	defer fb.Close()
	ra := textio.NewReader(textio.WithContext(ctx, fa))
	defer textio.PutReader(ra)
	rb := textio.NewReader(textio.WithContext(ctx, fb))
	defer textio.PutReader(rb)
	out := textio.NewWriter(inv.Stdout)
	defer textio.PutWriter(out)
	defer out.Flush()
	var pos, lineNo int64 = 0, 1
	status := 0
	for limit < 0 || pos < limit {
		ca, ea := ra.ReadByte()
		cb, eb := rb.ReadByte()
		if ea != nil || eb != nil {
			if ea != nil && eb != nil {
				break
			}
			short := a
			if eb != nil {
				short = b
			}
			if !silent {
				out.Flush()
				if pos == 0 {
					fmt.Fprintf(inv.Stderr, "cmp: EOF on %s which is empty\n", short)
				} else {
					fmt.Fprintf(inv.Stderr, "cmp: EOF on %s after byte %d, in line %d\n", short, pos, lineNo)
				}
			}
			return 1
		}
		pos++
		if ca != cb {
			status = 1
			if silent {
				return 1
			}
			if !verbose {
				fmt.Fprintf(out, "%s %s differ: %s %d, line %d\n", a, b, byteWord(inv), pos, lineNo)
				return 1
			}
			fmt.Fprintf(out, "%d %3o %3o\n", pos, ca, cb)
		}
		if ca == '\n' {
			lineNo++
		}
	}
	return status
}
