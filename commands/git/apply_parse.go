package git

import (
	"regexp"
	"strconv"
	"strings"
)

// Parsing of git apply's input, after git's apply.c: a "diff --git" header
// with its extended lines, or a traditional "---"/"+++" pair, then the
// "@@" hunks. Line numbers in errors are 1-based input lines.

type patchInput struct {
	lines []string // with their "\n" (the last may lack it)
	i     int
}

func (in *patchInput) line() string { return in.lines[in.i] }

// lineNo is the line number git reports for input line i (0-based).
func (a *applier) lineNo(i int) int { return i + 1 + a.skew }

// parse reads every patch of text. Patches outside the cwd's prefix or
// left out by --include/--exclude are counted in skipped.
func (a *applier) parse(text string) ([]*gpatch, int, error) {
	in := &patchInput{lines: strings.SplitAfter(text, "\n")}
	if n := len(in.lines); n > 0 && in.lines[n-1] == "" {
		in.lines = in.lines[:n-1]
	}
	var out []*gpatch
	skipped := 0
	for {
		p, err := a.findHeader(in)
		if err != nil {
			return nil, 0, err
		}
		if p == nil {
			break
		}
		if err := a.parseHunks(in, p); err != nil {
			return nil, 0, err
		}
		if len(p.hunks) == 0 {
			if in.i < len(in.lines) && in.line() == "GIT binary patch\n" {
				return nil, 0, unsupported("binary patch (" + displayName(p) + ")")
			}
			if in.i < len(in.lines) && strings.HasSuffix(in.line(), " differ\n") &&
				(strings.HasPrefix(in.line(), "Binary files ") || strings.HasPrefix(in.line(), "Files ")) {
				p.binary = true
				in.i++
			}
			if (a.o.apply || a.o.check) && !p.binary && !metadataChanges(p) {
				return nil, 0, errorf(128, "error: patch with only garbage at line %d", a.lineNo(in.i))
			}
		}
		a.prefixPatch(p)
		if a.o.reverse {
			p.oldName, p.newName = p.newName, p.oldName
			if p.newMode != 0 || p.isDelete > 0 {
				p.oldMode, p.newMode = p.newMode, p.oldMode
			}
			p.isNew, p.isDelete = p.isDelete, p.isNew
			p.added, p.deleted = p.deleted, p.added
		}
		if !a.usePatch(p) {
			skipped++
			if a.o.verbose {
				a.s.inv.Stderr.Write([]byte("Skipped patch '" + displayName(p) + "'.\n"))
			}
			continue
		}
		if a.o.reverse {
			out = append([]*gpatch{p}, out...)
		} else {
			out = append(out, p)
		}
	}
	return out, skipped, nil
}

func metadataChanges(p *gpatch) bool {
	return p.isRename || p.isCopy || p.isNew > 0 || p.isDelete > 0 || (p.oldMode != 0 && p.newMode != 0 && p.oldMode != p.newMode)
}

// prefixPatch puts a traditional patch's names under the cwd's prefix, as
// git does when run from a subdirectory.
func (a *applier) prefixPatch(p *gpatch) {
	if a.prefix == "" || p.toplevel {
		return
	}
	if p.oldName != "" {
		p.oldName = a.prefix + p.oldName
	}
	if p.newName != "" {
		p.newName = a.prefix + p.newName
	}
}

func (a *applier) usePatch(p *gpatch) bool {
	name := displayName(p)
	if a.prefix != "" {
		rest, ok := strings.CutPrefix(name, a.prefix)
		if !ok || rest == "" {
			return false
		}
	}
	for _, l := range a.o.limits {
		if l.re.MatchString(name) {
			return l.include
		}
	}
	return !a.o.hasInclude
}

// findHeader moves to the next patch header and parses it; nil at the end.
func (a *applier) findHeader(in *patchInput) (*gpatch, error) {
	// as in git, what a "diff --git" line that turns out to have no
	// header sets stays for the next one
	carry := &gpatch{toplevel: true}
	for ; in.i < len(in.lines); in.i++ {
		l := in.line()
		if len(l) < 6 {
			continue
		}
		if strings.HasPrefix(l, "@@ -") {
			if _, ok := parseFragmentHeader(l); ok {
				return nil, errorf(128, "error: patch fragment without header at line %d: %s", a.lineNo(in.i), strings.TrimSuffix(l, "\n"))
			}
			continue
		}
		if in.i+1 >= len(in.lines) {
			break
		}
		if strings.HasPrefix(l, "diff --git ") {
			p, ok, err := a.parseGitHeader(in, carry)
			if err != nil {
				return nil, err
			}
			if ok {
				return p, nil
			}
			continue
		}
		next := in.lines[in.i+1]
		if !strings.HasPrefix(l, "--- ") || !strings.HasPrefix(next, "+++ ") {
			continue
		}
		if in.i+2 >= len(in.lines) || !strings.HasPrefix(in.lines[in.i+2], "@@ -") {
			continue
		}
		p, err := a.parseTraditional(l[4:], next[4:], a.lineNo(in.i))
		if err != nil {
			return nil, err
		}
		in.i += 2
		return p, nil
	}
	return nil, nil
}

func isDevNull(s string) bool {
	return strings.HasPrefix(s, "/dev/null") && (len(s) == 9 || s[9] == '\t' || s[9] == ' ' || s[9] == '\n')
}

// findName is git's find_name: the path in line after p leading
// components, or def when it has too few, preferring def when the name is
// def with something tacked on ("f.orig"). git's own names end at a tab;
// traditional ones (find_name_traditional) run to the end of the line or
// to a diff timestamp.
func (a *applier) findName(line, def string, p int, traditional bool) string {
	line = strings.TrimSuffix(line, "\n")
	if strings.HasPrefix(line, `"`) {
		if name, _, ok := unquoteC(line); ok {
			if n, ok := skipComponents(name, p); ok && n != "" {
				return squashSlash(a.o.dir + n)
			}
		}
	}
	end := len(line)
	if traditional {
		if loc := diffTimestamp.FindStringIndex(line); loc != nil {
			end = loc[0]
		}
	} else if i := strings.IndexByte(line, '\t'); i >= 0 {
		end = i
	}
	name, ok := skipComponents(line[:end], p)
	if !ok || name == "" {
		return squashSlash(def)
	}
	if def != "" && len(def) < len(name) && strings.HasPrefix(name, def) {
		return squashSlash(def)
	}
	return squashSlash(a.o.dir + name)
}

// diffTimestamp is the date diff -u puts after a name (git's
// diff_timestamp_len), with the blanks before it.
var diffTimestamp = regexp.MustCompile(`(\t| +)[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?( [-+][0-9]{4}| [-+][0-9]{2}:[0-9]{2})?$`)

// epochStamp matches the time of a timestamp that may be the epoch
// (git's has_epoch_timestamp).
var epochStamp = regexp.MustCompile(`^([0-2][0-9]):([0-5][0-9]):00(\.0+)? ([-+])([0-2][0-9]):?([0-5][0-9])$`)

// hasEpochTimestamp tells a name line dated at the epoch: diff -N's way
// of saying the file does not exist on that side.
func hasEpochTimestamp(line string) bool {
	line = strings.TrimSuffix(line, "\n")
	i := strings.LastIndexByte(line, '\t')
	if i < 0 {
		return false
	}
	ts := line[i+1:]
	epochHour := 0
	switch {
	case strings.HasPrefix(ts, "1969-12-31 "):
		epochHour = 24
	case strings.HasPrefix(ts, "1970-01-01 "):
	default:
		return false
	}
	m := epochStamp.FindStringSubmatch(ts[11:])
	if m == nil {
		return false
	}
	hour, _ := strconv.Atoi(m[1])
	minute, _ := strconv.Atoi(m[2])
	zh, _ := strconv.Atoi(m[5])
	zm, _ := strconv.Atoi(m[6])
	zone := zh*60 + zm
	if m[4] == "-" {
		zone = -zone
	}
	return hour*60+minute-zone == epochHour*60
}

// guessStrip is git's guess_p_value for a traditional name line: 0 for a
// name without a slash, the prefix's depth when it starts with the cwd's
// prefix, else unknown (-1).
func (a *applier) guessStrip(line string) int {
	if isDevNull(line) {
		return -1
	}
	name := a.findName(line, "", 0, true)
	if name == "" {
		return -1
	}
	if !strings.Contains(name, "/") {
		return 0
	}
	if a.prefix != "" {
		if strings.HasPrefix(name, a.prefix) {
			return strings.Count(a.prefix, "/")
		}
		if _, rest, _ := strings.Cut(name, "/"); strings.HasPrefix(rest, a.prefix) {
			return strings.Count(a.prefix, "/") + 1
		}
	}
	return -1
}

// skipComponents drops p leading "dir/" components.
func skipComponents(s string, p int) (string, bool) {
	for ; p > 0; p-- {
		i := strings.IndexByte(s, '/')
		if i < 0 {
			return "", false
		}
		s = s[i+1:]
	}
	return s, true
}

func squashSlash(s string) string {
	for strings.Contains(s, "//") {
		s = strings.ReplaceAll(s, "//", "/")
	}
	return s
}

// unquoteC reads a C-style quoted name ("a\tb") at the start of s.
func unquoteC(s string) (string, string, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 >= len(s) {
				return "", "", false
			}
			i++
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'v':
				b.WriteByte('\v')
			case '\\', '"':
				b.WriteByte(e)
			default:
				if e >= '0' && e <= '3' && i+2 < len(s) {
					n, err := strconv.ParseUint(s[i:i+3], 8, 8)
					if err != nil {
						return "", "", false
					}
					b.WriteByte(byte(n))
					i += 2
				} else {
					return "", "", false
				}
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

func (a *applier) parseTraditional(first, second string, linenr int) (*gpatch, error) {
	p := &gpatch{isNew: -1, isDelete: -1}
	if !a.o.stripKnown {
		x, y := a.guessStrip(first), a.guessStrip(second)
		if x < 0 {
			x = y
		}
		if x >= 0 && x == y {
			a.o.strip, a.o.stripKnown = x, true
		}
	}
	strip := a.o.strip
	name := ""
	switch {
	case isDevNull(first):
		p.isNew, p.isDelete = 1, 0
		name = a.findName(second, "", strip, true)
		p.newName = name
	case isDevNull(second):
		p.isNew, p.isDelete = 0, 1
		name = a.findName(first, "", strip, true)
		p.oldName = name
	default:
		f := a.findName(first, "", strip, true)
		name = a.findName(second, f, strip, true)
		switch {
		case hasEpochTimestamp(first):
			p.isNew, p.isDelete, p.newName = 1, 0, name
		case hasEpochTimestamp(second):
			p.isNew, p.isDelete, p.oldName = 0, 1, name
		default:
			p.oldName, p.newName = name, name
		}
	}
	if name == "" {
		return nil, errorf(128, "error: unable to find filename in patch at line %d", linenr)
	}
	return p, nil
}

// gitHeaderName is git_header_name: the name on a "diff --git" line when
// both sides agree after stripping p components.
func gitHeaderName(l string, p int) string {
	l = strings.TrimSuffix(strings.TrimPrefix(l, "diff --git "), "\n")
	if strings.HasPrefix(l, `"`) {
		first, rest, ok := unquoteC(l)
		if !ok {
			return ""
		}
		first, ok = skipComponents(first, p)
		if !ok {
			return ""
		}
		rest = strings.TrimLeft(rest, " \t")
		var second string
		if strings.HasPrefix(rest, `"`) {
			second, _, ok = unquoteC(rest)
			if !ok {
				return ""
			}
		} else {
			second = rest
		}
		if s, ok := skipComponents(second, p); ok && s == first {
			return first
		}
		return ""
	}
	name, ok := skipComponents(l, p)
	if !ok {
		return ""
	}
	for i := 0; i < len(name); i++ {
		if name[i] != ' ' && name[i] != '\t' {
			continue
		}
		if sec, ok := skipComponents(name[i+1:], p); ok && sec == name[:i] {
			return name[:i]
		}
	}
	return ""
}

// parseGitHeader reads "diff --git" and its extended header lines; ok is
// false when no extended line follows (git then looks further).
func (a *applier) parseGitHeader(in *patchInput, p *gpatch) (*gpatch, bool, error) {
	start := in.i
	p.isNew, p.isDelete = 0, 0
	def := gitHeaderName(in.line(), a.o.strip)
	if def != "" {
		def = a.o.dir + def
	}
	in.i++
	// git 2.39 reports the line after "diff --git" for these header errors
	hdrLine := a.lineNo(in.i)
	var extLine int
	bad := func(format string, x ...any) error { return errorf(128, "error: "+format, x...) }
	verify := func(rest string, isNull bool, name *string, side string) error {
		if *name == "" && !isNull {
			*name = a.findName(rest, "", a.o.strip, false)
			return nil
		}
		if *name != "" {
			if isNull {
				return bad("git apply: bad git-diff - expected /dev/null, got %s on line %d", *name, hdrLine)
			}
			if another := a.findName(rest, "", a.o.strip, false); another != *name {
				return bad("git apply: bad git-diff - inconsistent %s filename on line %d", side, hdrLine)
			}
			return nil
		}
		if !isDevNull(rest) {
			return bad("git apply: bad git-diff - expected /dev/null on line %d", hdrLine)
		}
		return nil
	}
	mode := func(rest string, m *uint32) error {
		f := rest
		if j := strings.IndexAny(rest, " \t\n"); j >= 0 {
			f = rest[:j]
		}
		v, err := strconv.ParseUint(f, 8, 32)
		if err != nil {
			// git prints the unterminated line: the rest of the input
			tail := strings.Join(in.lines[in.i+1:], "")
			return bad("invalid mode on line %d: %s%s", hdrLine, rest, tail)
		}
		*m = canonMode(uint32(v))
		return nil
	}
	renameName := func(rest string) string {
		return a.findName(rest, "", 0, false)
	}
loop:
	for ; in.i < len(in.lines); in.i++ {
		l := in.line()
		if !strings.HasSuffix(l, "\n") {
			break
		}
		var err error
		switch {
		case strings.HasPrefix(l, "@@ -"):
			break loop
		case strings.HasPrefix(l, "--- "):
			err = verify(l[4:], p.isNew > 0, &p.oldName, "old")
		case strings.HasPrefix(l, "+++ "):
			err = verify(l[4:], p.isDelete > 0, &p.newName, "new")
		case strings.HasPrefix(l, "old mode "):
			err = mode(l[9:], &p.oldMode)
		case strings.HasPrefix(l, "new mode "):
			err = mode(l[9:], &p.newMode)
		case strings.HasPrefix(l, "deleted file mode "):
			p.isDelete, p.oldName = 1, def
			err = mode(l[18:], &p.oldMode)
		case strings.HasPrefix(l, "new file mode "):
			p.isNew, p.newName = 1, def
			err = mode(l[14:], &p.newMode)
		case strings.HasPrefix(l, "copy from "):
			p.isCopy, p.oldName = true, renameName(l[10:])
		case strings.HasPrefix(l, "copy to "):
			p.isCopy, p.newName = true, renameName(l[8:])
		case strings.HasPrefix(l, "rename old "):
			p.isRename, p.oldName = true, renameName(l[11:])
		case strings.HasPrefix(l, "rename new "):
			p.isRename, p.newName = true, renameName(l[11:])
		case strings.HasPrefix(l, "rename from "):
			p.isRename, p.oldName = true, renameName(l[12:])
		case strings.HasPrefix(l, "rename to "):
			p.isRename, p.newName = true, renameName(l[10:])
		case strings.HasPrefix(l, "similarity index "), strings.HasPrefix(l, "dissimilarity index "):
			_, v, _ := strings.Cut(l, "index ")
			digits := strings.TrimRight(v, "%\n")
			if n, err := strconv.Atoi(digits); err == nil && n <= 100 {
				p.score = n
			}
		case strings.HasPrefix(l, "index "):
			rest := strings.TrimSuffix(l[6:], "\n")
			if dots := strings.Index(rest, ".."); dots > 0 && dots <= 40 {
				after := rest[dots+2:]
				if sp := strings.IndexByte(after, ' '); sp >= 0 && sp <= 40 {
					err = mode(after[sp+1:]+"\n", &p.oldMode)
				}
			}
		default:
			break loop
		}
		if err != nil {
			return nil, false, err
		}
		ext := 0
		for _, b := range []bool{p.isDelete == 1, p.isNew == 1, p.isRename, p.isCopy} {
			if b {
				ext++
			}
		}
		if ext > 1 {
			return nil, false, bad("inconsistent header lines %d and %d", extLine, a.lineNo(in.i))
		}
		if ext > 0 && extLine == 0 {
			extLine = a.lineNo(in.i)
		}
	}
	if p.oldName == "" && p.newName == "" {
		if def == "" {
			unit := "components"
			if a.o.strip == 1 {
				unit = "component"
			}
			return nil, false, bad("git diff header lacks filename information when removing %d leading pathname %s (line %d)", a.o.strip, unit, a.lineNo(in.i))
		}
		p.oldName, p.newName = def, def
	}
	if (p.newName == "" && p.isDelete <= 0) || (p.oldName == "" && p.isNew <= 0) {
		return nil, false, bad("git diff header lacks filename information (line %d)", a.lineNo(in.i))
	}
	if in.i == start+1 {
		// only the "diff --git" line: git looks further, and its line
		// count runs one ahead from here on
		in.i = start
		a.skew++
		return nil, false, nil
	}
	return p, true, nil
}

func canonMode(m uint32) uint32 {
	switch {
	case m&0o170000 == 0o120000:
		return 0o120000
	case m&0o170000 == 0o040000:
		return 0o040000
	case m&0o170000 == 0o160000:
		return 0o160000
	case m&0o100 != 0:
		return 0o100755
	}
	return 0o100644
}

func parseFragmentHeader(l string) (*ghunk, bool) {
	if !strings.HasSuffix(l, "\n") || !strings.HasPrefix(l, "@@ -") {
		return nil, false
	}
	h := &ghunk{}
	rest, ok := parseRange(l[4:], " +", &h.oldPos, &h.oldLines)
	if !ok {
		return nil, false
	}
	if _, ok := parseRange(rest, " @@", &h.newPos, &h.newLines); !ok {
		return nil, false
	}
	return h, true
}

// saturate reads digits, as strtoul does up to its largest value: git
// 2.39 takes an overflowing count as huge, so the hunk runs out.
func saturate(digits string) int {
	v, err := strconv.Atoi(digits)
	if err != nil || v > 1<<40 {
		return 1 << 40
	}
	return v
}

// parseRange reads "N[,M]" then expect; a missing M is 1.
func parseRange(s, expect string, pos, n *int) (string, bool) {
	d := 0
	for d < len(s) && s[d] >= '0' && s[d] <= '9' {
		d++
	}
	if d == 0 {
		return "", false
	}
	*pos, *n = saturate(s[:d]), 1
	s = s[d:]
	if strings.HasPrefix(s, ",") {
		d = 1
		for d < len(s) && s[d] >= '0' && s[d] <= '9' {
			d++
		}
		if d == 1 {
			return "", false
		}
		*n = saturate(s[1:d])
		s = s[d:]
	}
	if !strings.HasPrefix(s, expect) {
		return "", false
	}
	return s[len(expect):], true
}

// parseHunks reads the "@@" fragments of p.
func (a *applier) parseHunks(in *patchInput, p *gpatch) error {
	oldTotal, newTotal := 0, 0
	for in.i < len(in.lines) && len(in.line()) > 4 && strings.HasPrefix(in.line(), "@@ -") {
		h, err := a.parseFragment(in, p)
		if err != nil {
			return err
		}
		oldTotal += h.oldLines
		newTotal += h.newLines
		p.hunks = append(p.hunks, h)
	}
	if p.isNew < 0 && (oldTotal > 0 || len(p.hunks) > 1) {
		p.isNew = 0
	}
	if p.isDelete < 0 && (newTotal > 0 || len(p.hunks) > 1) {
		p.isDelete = 0
	}
	if p.isNew > 0 && oldTotal > 0 {
		return errorf(128, "error: new file %s depends on old contents", p.newName)
	}
	if p.isDelete > 0 && newTotal > 0 {
		return errorf(128, "error: deleted file %s still has contents", p.oldName)
	}
	if p.isDelete <= 0 && newTotal == 0 && len(p.hunks) > 0 && !a.o.quiet {
		ctx := 0
		for _, h := range p.hunks {
			ctx += h.leading + h.trailing
		}
		if ctx > 0 {
			a.s.inv.Stderr.Write([]byte("** warning: file " + p.newName + " becomes empty but is not deleted\n"))
		}
	}
	return nil
}

const (
	wsBlankAtEOL = 1 << iota
	wsSpaceBeforeTab
	wsBlankAtEOF
)

// parseFragment reads one "@@" hunk as git 2.39's parse_fragment: a
// "\ ..." line anywhere in it marks the line before as having no newline.
func (a *applier) parseFragment(in *patchInput, p *gpatch) (*ghunk, error) {
	corrupt := func() error { return errorf(128, "error: corrupt patch at line %d", a.lineNo(in.i)) }
	h, ok := parseFragmentHeader(in.line())
	if !ok {
		return nil, corrupt()
	}
	if a.o.recount {
		a.recount(in, h)
	}
	oldLeft, newLeft := h.oldLines, h.newLines
	added, deleted := 0, 0
	in.i++
	crAtEOL := false
	lastContent := false // the line before was a hunk line ("\" may follow)
	incomplete := func() {
		if lastContent && len(h.lines) > 0 {
			last := &h.lines[len(h.lines)-1]
			last.text = strings.TrimSuffix(last.text, "\n")
		}
		lastContent = false
	}
	for in.i < len(in.lines) {
		if oldLeft == 0 && newLeft == 0 {
			break
		}
		l := in.line()
		if !strings.HasSuffix(l, "\n") {
			return nil, corrupt()
		}
		text := l[1:]
		if l == "\n" {
			text = "\n"
		}
		kind := l[0]
		switch kind {
		case '\n', ' ':
			kind = ' '
			oldLeft--
			newLeft--
			if deleted == 0 && added == 0 {
				h.leading++
			}
			h.trailing++
			if strings.HasSuffix(l, "\r\n") {
				crAtEOL = true
			}
		case '-':
			if !a.o.reverse && strings.HasSuffix(l, "\r\n") {
				crAtEOL = true
			}
			if a.o.reverse && a.o.ws != "nowarn" {
				a.checkWhitespace(text, a.lineNo(in.i), crAtEOL)
			}
			deleted++
			oldLeft--
			h.trailing = 0
		case '+':
			if a.o.reverse && strings.HasSuffix(l, "\r\n") {
				crAtEOL = true
			}
			if !a.o.reverse && a.o.ws != "nowarn" {
				a.checkWhitespace(text, a.lineNo(in.i), crAtEOL)
			}
			added++
			newLeft--
			h.trailing = 0
		case '\\':
			if len(l) < 12 || !strings.HasPrefix(l, "\\ ") {
				return nil, corrupt()
			}
			incomplete()
			in.i++
			continue
		default:
			return nil, corrupt()
		}
		h.lines = append(h.lines, hline{kind: kind, text: text})
		lastContent = true
		in.i++
	}
	if oldLeft != 0 || newLeft != 0 {
		return nil, corrupt()
	}
	if deleted == 0 && added == 0 {
		return nil, corrupt()
	}
	// a marker right after the counted lines is eaten too, without being
	// counted as a line (git 2.39's numbers run one behind from here)
	if in.i < len(in.lines) && strings.HasPrefix(in.line(), "\\ ") && remaining(in) > 12 {
		incomplete()
		in.i++
		a.skew--
	}
	p.added += added
	p.deleted += deleted
	return h, nil
}

// remaining is how many bytes of input are left from the current line.
func remaining(in *patchInput) int {
	n := 0
	for _, l := range in.lines[in.i:] {
		n += len(l)
		if n > 12 {
			break
		}
	}
	return n
}

// recount (--recount) counts a fragment's lines instead of trusting its
// header.
func (a *applier) recount(in *patchInput, h *ghunk) {
	o, n := 0, 0
	for j := in.i + 1; j < len(in.lines); j++ {
		l := in.lines[j]
		if strings.HasPrefix(l, "@@ -") || strings.HasPrefix(l, "diff ") {
			break
		}
		switch l[0] {
		case ' ', '\n':
			o++
			n++
		case '-':
			if strings.HasPrefix(l, "--- ") && j+1 < len(in.lines) && strings.HasPrefix(in.lines[j+1], "+++ ") {
				goto done
			}
			o++
		case '+':
			n++
		case '\\':
		default:
			goto done
		}
	}
done:
	h.oldLines, h.newLines = o, n
}

// checkWhitespace reports an added line's whitespace errors as git's
// default core.whitespace (blank-at-eol, space-before-tab) does.
func (a *applier) checkWhitespace(text string, linenr int, crAtEOL bool) {
	body := strings.TrimSuffix(text, "\n")
	if crAtEOL {
		body = strings.TrimSuffix(body, "\r")
	}
	var errs []string
	trail := len(strings.TrimRight(body, " \t\n\v\f\r"))
	if trail != len(body) {
		errs = append(errs, "trailing whitespace")
	}
	written := 0
	for i := 0; i < trail; i++ {
		if body[i] == ' ' {
			continue
		}
		if body[i] != '\t' {
			break
		}
		if written < i {
			errs = append(errs, "space before tab in indent")
			break
		}
		written = i + 1
	}
	if len(errs) == 0 {
		return
	}
	a.wsErrors++
	if !a.o.quiet && (a.wsErrors <= wsSquelch || a.o.ws == "error-all") {
		a.s.inv.Stderr.Write([]byte(a.input + ":" + strconv.Itoa(linenr) + ": " + strings.Join(errs, ", ") + ".\n" + strings.TrimSuffix(text, "\n") + "\n"))
	}
}
