package git

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// git format-patch: commits as mails in git 2.39's format (mbox "From"
// line, RFC 2822 headers wrapped at 78 columns, RFC 2047 for non-ASCII,
// a 72-column diffstat, the patch, the version signature), one file per
// commit or all on stdout.

// patchSignature is the "-- " signature's version: the git whose output
// this reproduces.
const patchSignature = "2.39.5"

func cmdFormatPatch(s *session, args []string) error {
	stdout, numbered, noNumbered := false, false, false
	outDir := ""
	count := -1
	var revs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--stdout":
			stdout = true
		case a == "-n" || a == "--numbered":
			numbered = true
		case a == "-N" || a == "--no-numbered":
			noNumbered = true
		case (a == "-o" || a == "--output-directory") && i+1 < len(args):
			i++
			outDir = args[i]
		case strings.HasPrefix(a, "--output-directory="):
			outDir = strings.TrimPrefix(a, "--output-directory=")
		case len(a) > 1 && a[0] == '-' && a[1] >= '0' && a[1] <= '9':
			n, err := strconv.Atoi(a[1:])
			if err != nil {
				return unknownOpt(a)
			}
			count = n
		case a == "-q" || a == "--quiet":
			s.quiet = true
		case a == "--no-stat" || a == "-p" || a == "--no-signature" || a == "--root" || strings.HasPrefix(a, "-"):
			// --root, --cover-letter, -M, --subject-prefix and the rest:
			// the image's git has them
			return unknownOpt(a)
		default:
			revs = append(revs, a)
		}
	}
	// options first: what format-patch cannot do is refused, repository or not
	if err := s.open(); err != nil {
		return err
	}
	commits, err := s.patchCommits(revs, count)
	if err != nil {
		return err
	}
	total := len(commits)
	var files []string
	for i, c := range commits {
		var b bytes.Buffer
		nr := i + 1
		label := "[PATCH]"
		if (total > 1 || numbered) && !noNumbered {
			label = fmt.Sprintf("[PATCH %d/%d]", nr, total)
		}
		if err := s.writeMail(&b, c, label); err != nil {
			return err
		}
		if stdout {
			if i > 0 {
				s.out.WriteString("\n") // git's mbox separates the mails with a blank line
			}
			s.out.Write(b.Bytes())
			continue
		}
		name := fmt.Sprintf("%04d-%s", nr, sanitizedSubject(c.Message))
		if len(name) > 64-len(".patch")-1 {
			name = name[:64-len(".patch")-1]
		}
		name += ".patch"
		if outDir != "" {
			name = path.Join(outDir, name)
			if !strings.HasPrefix(outDir, "/") {
				name = strings.TrimPrefix(name, "./")
			}
		}
		abs := pathJoin(s.dir, name)
		if outDir != "" {
			if err := s.inv.FS.MkdirAll(pathJoin(s.dir, outDir), 0o755); err != nil {
				return fatalf("could not create leading directories of '%s'", name)
			}
		}
		if err := s.inv.FS.WriteFile(abs, b.Bytes(), 0o644); err != nil {
			return fatalf("could not open '%s' for writing", name)
		}
		files = append(files, name)
	}
	if !s.quiet {
		for _, f := range files {
			fmt.Fprintln(s.out, f)
		}
	}
	return nil
}

// patchCommits lists the commits to format, oldest first: -N from HEAD
// (or from the one revision), "<since>" meaning since..HEAD, or a range;
// merges are left out as git does.
func (s *session) patchCommits(revs []string, count int) ([]*object.Commit, error) {
	var from, exclude string
	switch {
	case len(revs) > 1:
		return nil, unsupported("several revision arguments")
	case len(revs) == 1 && strings.Contains(revs[0], ".."):
		if strings.Contains(revs[0], "...") {
			return nil, unsupported("symmetric ranges")
		}
		x, y, _ := strings.Cut(revs[0], "..")
		exclude, from = x, y
		if exclude == "" {
			exclude = "HEAD"
		}
		if from == "" {
			from = "HEAD"
		}
	case len(revs) == 1 && count >= 0:
		from = revs[0]
	case len(revs) == 1:
		exclude, from = revs[0], "HEAD"
	default:
		if count < 0 {
			// git format-patch with no revision formats nothing
			return nil, nil
		}
		from = "HEAD"
	}
	head, err := s.resolve(from)
	if err != nil {
		return nil, err
	}
	excluded := map[plumbing.Hash]bool{}
	if exclude != "" {
		x, err := s.resolve(exclude)
		if err != nil {
			return nil, err
		}
		iter, err := s.logFrom(x, false)
		if err != nil {
			return nil, err
		}
		iter.ForEach(func(c *object.Commit) error { excluded[c.Hash] = true; return nil })
	}
	iter, err := s.logFrom(head, false)
	if err != nil {
		return nil, err
	}
	var list []*object.Commit
	err = iter.ForEach(func(c *object.Commit) error {
		if s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		if excluded[c.Hash] {
			return nil
		}
		if count >= 0 && len(list) >= count {
			return errStopWalk
		}
		if c.NumParents() <= 1 {
			list = append(list, c)
		}
		return nil
	})
	if err != nil && err != errStopWalk {
		return nil, err
	}
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return list, nil
}

var errStopWalk = fmt.Errorf("stop")

// writeMail formats c as format-patch's mail.
func (s *session) writeMail(b *bytes.Buffer, c *object.Commit, label string) error {
	changes, err := s.commitChanges(c)
	if err != nil {
		return err
	}
	if changes, err = s.findRenames(changes); err != nil {
		return err
	}
	for _, ch := range changes {
		ch.compute()
		if ch.binary {
			return unsupported("format-patch of a binary change (" + ch.name() + ")")
		}
	}
	fmt.Fprintf(b, "From %s Mon Sep 17 00:00:00 2001\n", c.Hash)
	b.WriteString("From: ")
	name := c.Author.Name
	switch {
	case needsRFC2047(name):
		addRFC2047(b, name, true)
		if lastLineLen(b)+2+len(c.Author.Email)+1 > 76 {
			b.WriteString("\n")
		}
	default:
		if needsQuoting(name) {
			name = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
		}
		addWrapped(b, name, -6, 1, 78)
		if lastLineLen(b)+2+len(c.Author.Email)+1 > 78 {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(b, " <%s>\n", c.Author.Email)
	fmt.Fprintf(b, "Date: %s\n", c.Author.When.Format("Mon, 2 Jan 2006 15:04:05 -0700"))
	title, body := splitMessage(c.Message)
	b.WriteString("Subject: " + label + " ")
	if needsRFC2047(title) {
		addRFC2047(b, title, false)
	} else {
		addWrapped(b, title, -lastLineLen(b), 1, 78)
	}
	b.WriteString("\n")
	if hasNonASCII(c.Message) || hasNonASCII(c.Author.Name) {
		b.WriteString("MIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\n")
	}
	b.WriteString("\n")
	if body != "" {
		b.WriteString(body + "\n")
	}
	b.WriteString("---\n")
	writeStatWidth(b, changes, 72)
	writeSummary(b, changes)
	b.WriteString("\n")
	for _, ch := range changes {
		writePatch(b, ch, 3)
	}
	b.WriteString("-- \n" + patchSignature + "\n\n")
	return nil
}

// splitMessage is the subject (the first paragraph, joined with spaces)
// and the rest of a commit message, its trailing blank lines dropped.
func splitMessage(msg string) (string, string) {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	var title []string
	for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
		title = append(title, strings.TrimSpace(lines[i]))
		i++
	}
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	return strings.Join(title, " "), strings.Join(lines[i:], "\n")
}

func sanitizedSubject(msg string) string {
	title, _ := splitMessage(msg)
	var b strings.Builder
	space := 2
	for i := 0; i < len(title); i++ {
		c := title[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' {
			if space == 1 {
				b.WriteByte('-')
			}
			space = 0
			b.WriteByte(c)
			if c == '.' {
				for i+1 < len(title) && title[i+1] == '.' {
					i++
				}
			}
		} else {
			space |= 1
		}
	}
	return strings.TrimRight(b.String(), ".-")
}

func lastLineLen(b *bytes.Buffer) int {
	d := b.Bytes()
	return len(d) - (bytes.LastIndexByte(d, '\n') + 1)
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

func needsRFC2047(s string) bool {
	return hasNonASCII(s) || strings.Contains(s, "\n") || strings.Contains(s, "=?")
}

func needsQuoting(s string) bool { return strings.ContainsAny(s, `()<>[]:;@,."\`) }

// addRFC2047 is git's add_rfc2047: "=?UTF-8?q?...?=", folded to stay
// within 76 columns, each character whole.
func addRFC2047(b *bytes.Buffer, s string, address bool) {
	const enc = "UTF-8"
	lineLen := lastLineLen(b) + len(enc) + 5
	b.WriteString("=?" + enc + "?q?")
	for len(s) > 0 {
		_, n := utf8.DecodeRuneInString(s)
		ch := s[0]
		special := n > 1 || ch < 0x20 || ch >= 0x7f || ch == ' ' || ch == '=' || ch == '?' || ch == '_'
		if !special && address {
			special = !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("!*+-/", ch) >= 0)
		}
		encLen := 1
		if special {
			encLen = 3 * n
		}
		if lineLen+encLen+2 > 76 {
			b.WriteString("?=\n =?" + enc + "?q?")
			lineLen = len(enc) + 5 + 1
		}
		for i := 0; i < n; i++ {
			if special {
				fmt.Fprintf(b, "=%02X", s[i])
			} else {
				b.WriteByte(s[i])
			}
		}
		lineLen += encLen
		s = s[n:]
	}
	b.WriteString("?=")
}

// addWrapped is git's strbuf_add_wrapped_text for one-line text: words
// are moved to a new line (indented by indent2) when they would pass
// width; a negative indent1 is what the first line already holds.
func addWrapped(b *bytes.Buffer, text string, indent1, indent2, width int) {
	bol, space := 0, -1
	w, indent := indent1, indent1
	if indent < 0 {
		w, space = -indent, 0
	}
	i := 0
	for {
		var c byte
		if i < len(text) {
			c = text[i]
		}
		if c == 0 || c == ' ' || c == '\t' {
			if w <= width || space < 0 {
				start := bol
				if c == 0 && i == start {
					return
				}
				if space >= 0 {
					start = space
				} else {
					b.WriteString(strings.Repeat(" ", max(indent, 0)))
				}
				b.WriteString(text[start:i])
				if c == 0 {
					return
				}
				space = i
				if c == '\t' {
					w |= 7
				}
				w++
				i++
			} else {
				b.WriteByte('\n')
				i = space
				if i < len(text) && (text[i] == ' ' || text[i] == '\t') {
					i++
				}
				bol, space = i, -1
				w, indent = indent2, indent2
			}
			continue
		}
		_, n := utf8.DecodeRuneInString(text[i:])
		w++
		i += n
	}
}
