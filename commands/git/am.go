package git

import (
	"fmt"
	"mime"
	"path"
	"strconv"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/warren-sandbox/warren/commands"
)

// git am: mails as git format-patch writes them (an mbox of one or more)
// become commits: author and date from the mail, committer the current
// identity, the message from Subject ("[PATCH n/m]" dropped) and the body
// up to "---". A patch that does not apply stops the run with git's
// .git/rebase-apply state, which --continue, --skip and --abort resume.

type mail struct {
	author, email, date string
	subject, body       string
	patch               string
}

func cmdAm(s *session, args []string) error {
	action := ""
	var files []string
	for _, a := range args {
		switch {
		case a == "--continue" || a == "-r" || a == "--resolved" || a == "--skip" || a == "--abort" || a == "--quit":
			action = strings.TrimLeft(a, "-")
			if action == "r" || action == "resolved" {
				action = "continue"
			}
		case a == "-q" || a == "--quiet":
			s.quiet = true
		case a == "-3" || a == "--3way":
			return unsupported(a)
		case a == "-" || !strings.HasPrefix(a, "-"):
			files = append(files, a)
		default:
			// -k, -s, --signoff, --show-current-patch, -i...: the image's git
			return unknownOpt(a)
		}
	}
	// options first: what am cannot do is refused, repository or not
	if err := s.open(); err != nil {
		return err
	}
	dir := path.Join(s.root, ".git", "rebase-apply")
	_, statErr := s.inv.FS.Stat(dir)
	inProgress := statErr == nil
	if action != "" {
		if !inProgress {
			return fatalf("Resolve operation not in progress, we are not resuming.")
		}
		return s.amResume(dir, action)
	}
	if inProgress {
		return fatalf("previous rebase directory %s still exists but mbox given.", ".git/rebase-apply")
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	var mails []string
	for _, f := range files {
		var data []byte
		var err error
		if f == "-" {
			data, err = s.readCharged(s.inv.Stdin)
		} else {
			rc, oerr := s.inv.Open(pathJoin(s.dir, f))
			if oerr != nil {
				return fatalf("could not open '%s' for reading: %s", f, commands.Strerror(oerr))
			}
			data, err = s.readCharged(rc)
			rc.Close()
		}
		if err != nil {
			return err
		}
		mails = append(mails, splitMbox(string(data))...)
	}
	if len(mails) == 0 {
		return nil
	}
	if err := s.amCheckIndex(); err != nil {
		return err
	}
	if err := s.inv.FS.MkdirAll(dir, 0o755); err != nil {
		return fatalf("could not create directory '%s'", dir)
	}
	for i, m := range mails {
		if err := s.inv.FS.WriteFile(path.Join(dir, fmt.Sprintf("%04d", i+1)), []byte(m), 0o644); err != nil {
			return err
		}
	}
	head, _ := s.head()
	if head != nil {
		s.inv.FS.WriteFile(path.Join(s.root, ".git", "ORIG_HEAD"), []byte(head.Hash().String()+"\n"), 0o644)
		s.inv.FS.WriteFile(path.Join(dir, "abort-safety"), []byte(head.Hash().String()+"\n"), 0o644)
	}
	s.writeAmState(dir, 1, len(mails))
	return s.amRun(dir, 1, len(mails))
}

func (s *session) writeAmState(dir string, next, last int) {
	s.inv.FS.WriteFile(path.Join(dir, "next"), []byte(strconv.Itoa(next)+"\n"), 0o644)
	s.inv.FS.WriteFile(path.Join(dir, "last"), []byte(strconv.Itoa(last)+"\n"), 0o644)
}

func (s *session) readAmState(dir string) (int, int) {
	read := func(n string) int {
		b, _ := s.inv.FS.ReadFile(path.Join(dir, n))
		v, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return v
	}
	return read("next"), read("last")
}

// amCheckIndex refuses to start with staged changes, as git am does.
func (s *session) amCheckIndex() error {
	head, err := s.headSnapshot()
	if err != nil {
		return err
	}
	idx, err := s.indexSnapshot()
	if err != nil {
		return err
	}
	var dirty []string
	for _, ch := range compare(head, idx, nil) {
		dirty = append(dirty, ch.name())
	}
	if len(dirty) > 0 {
		return fatalf("Dirty index: cannot apply patches (dirty: %s)", strings.Join(dirty, " "))
	}
	return nil
}

// amRun applies mails next..last from dir.
func (s *session) amRun(dir string, next, last int) error {
	for ; next <= last; next++ {
		s.writeAmState(dir, next, last)
		raw, err := s.inv.FS.ReadFile(path.Join(dir, fmt.Sprintf("%04d", next)))
		if err != nil {
			return fatalf("could not read '%s'", path.Join(dir, fmt.Sprintf("%04d", next)))
		}
		m := parseMail(string(raw))
		s.inv.FS.WriteFile(path.Join(dir, "final-commit"), []byte(m.message()), 0o644)
		s.inv.FS.WriteFile(path.Join(dir, "author-script"), []byte(authorScript(m)), 0o644)
		s.inv.FS.WriteFile(path.Join(dir, "patch"), []byte(m.patch), 0o644)
		if strings.TrimSpace(m.patch) == "" {
			fmt.Fprintln(s.out, "Patch is empty.")
			return s.amStop(true)
		}
		if !s.quiet {
			fmt.Fprintf(s.out, "Applying: %s\n", firstLine(m.message()))
		}
		// what was printed so far goes out before apply's errors
		s.inv.Stdout.Write(s.out.Bytes())
		s.out.Reset()
		a := &applier{s: s, o: applyOpts{strip: 1, context: -1, index: true, apply: true, ws: "warn", quiet: s.quiet},
			table: map[string]*fileState{}}
		st, err := a.applyPatch(m.patch, ".git/rebase-apply/patch")
		if a.wsErrors > 0 {
			if werr := a.wsSummary(); werr != nil && err == nil {
				err = werr
			}
		}
		if err != nil {
			var ee *exitError
			if isRefusal(err) {
				return err
			}
			if e, ok := err.(*exitError); ok {
				ee = e
				if ee.msg != "" {
					fmt.Fprintln(s.inv.Stderr, ee.msg)
				}
			} else {
				fmt.Fprintf(s.inv.Stderr, "error: %v\n", err)
			}
			st = 1
		}
		if st != 0 {
			fmt.Fprintln(s.inv.Stderr, "hint: Use 'git am --show-current-patch=diff' to see the failed patch")
			fmt.Fprintf(s.out, "Patch failed at %04d %s\n", next, firstLine(m.message()))
			return s.amStop(false)
		}
		if err := s.amCommit(m); err != nil {
			return err
		}
	}
	s.amClean()
	return nil
}

func (s *session) amStop(empty bool) error {
	s.out.WriteString("When you have resolved this problem, run \"git am --continue\".\n" +
		"If you prefer to skip this patch, run \"git am --skip\" instead.\n")
	if empty {
		s.out.WriteString("To record the empty patch as an empty commit, run \"git am --allow-empty\".\n")
	}
	s.out.WriteString("To restore the original branch and stop patching, run \"git am --abort\".\n")
	return &exitError{128, ""}
}

func (s *session) amClean() {
	dir := path.Join(s.root, ".git", "rebase-apply")
	if ents, err := s.inv.FS.ReadDir(dir); err == nil {
		for _, e := range ents {
			s.inv.FS.Remove(path.Join(dir, e.Name()))
		}
	}
	s.inv.FS.Remove(dir)
}

// amCommit commits the index with the mail's author and message.
func (s *session) amCommit(m *mail) error {
	committer, err := s.signature("COMMITTER")
	if err != nil {
		return err
	}
	author := &object.Signature{Name: m.author, Email: m.email, When: committer.When}
	if m.date != "" {
		t, err := s.parseDate(m.date)
		if err != nil {
			return fatalf("invalid date format: %s", m.date)
		}
		author.When = t
	}
	opts := &gogit.CommitOptions{Author: author, Committer: committer, AllowEmptyCommits: true}
	if _, err := s.head(); err == nil {
		h, _ := s.head()
		opts.Parents = []plumbing.Hash{h.Hash()}
	}
	if _, err := s.wt.Commit(m.message(), opts); err != nil {
		return fatalf("%v", err)
	}
	return nil
}

// amResume is --continue, --skip, --abort and --quit.
func (s *session) amResume(dir, action string) error {
	next, last := s.readAmState(dir)
	switch action {
	case "quit":
		s.amClean()
		return nil
	case "abort":
		orig, err := s.inv.FS.ReadFile(path.Join(dir, "abort-safety"))
		s.amClean()
		if err == nil {
			h := plumbing.NewHash(strings.TrimSpace(string(orig)))
			if err := s.hardReset(h); err != nil {
				return fatalf("%v", err)
			}
		}
		return nil
	case "skip":
		head, err := s.head()
		if err == nil {
			if err := s.hardReset(head.Hash()); err != nil {
				return fatalf("%v", err)
			}
		}
		return s.amRun(dir, next+1, last)
	}
	// continue: commit what the user resolved
	raw, err := s.inv.FS.ReadFile(path.Join(dir, fmt.Sprintf("%04d", next)))
	if err != nil {
		return fatalf("could not read '%s'", fmt.Sprintf("%04d", next))
	}
	m := parseMail(string(raw))
	if !s.quiet {
		fmt.Fprintf(s.out, "Applying: %s\n", firstLine(m.message()))
	}
	head, err := s.headSnapshot()
	if err != nil {
		return err
	}
	idx, err := s.indexSnapshot()
	if err != nil {
		return err
	}
	if len(compare(head, idx, nil)) == 0 {
		s.out.WriteString("No changes - did you forget to use 'git add'?\n" +
			"If there is nothing left to stage, chances are that something else\n" +
			"already introduced the same changes; you might want to skip this patch.\n")
		return s.amStop(false)
	}
	if err := s.amCommit(m); err != nil {
		return err
	}
	return s.amRun(dir, next+1, last)
}

func authorScript(m *mail) string {
	q := func(v string) string { return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'" }
	return "GIT_AUTHOR_NAME=" + q(m.author) + "\nGIT_AUTHOR_EMAIL=" + q(m.email) + "\nGIT_AUTHOR_DATE=" + q(m.date) + "\n"
}

// splitMbox is git mailsplit: an mbox splits at its "From " lines; other
// input is one mail.
func splitMbox(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if len(lines) == 0 || !isFromLine(lines[0]) {
		return []string{text}
	}
	var out []string
	var cur strings.Builder
	for i, l := range lines {
		if isFromLine(l) && (i == 0 || lines[i-1] == "\n") {
			if i > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteString(l)
	}
	return append(out, cur.String())
}

// isFromLine is mailsplit's test for an mbox separator: "From " and a
// date with a time and a year.
func isFromLine(l string) bool {
	if !strings.HasPrefix(l, "From ") {
		return false
	}
	f := strings.Fields(l)
	if len(f) < 3 {
		return false
	}
	if !strings.Contains(l, ":") {
		return false
	}
	_, err := strconv.Atoi(f[len(f)-1])
	return err == nil
}

// parseMail is git mailinfo for format-patch's mails.
func parseMail(text string) *mail {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	head, body, _ := strings.Cut(text, "\n\n")
	if strings.HasPrefix(text, "\n") {
		head, body = "", text[1:]
	}
	m := &mail{}
	var headers []string
	for _, l := range strings.Split(head, "\n") {
		if (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) && len(headers) > 0 {
			headers[len(headers)-1] += l // RFC 2822 unfolding keeps the blank
			continue
		}
		headers = append(headers, l)
	}
	dec := new(mime.WordDecoder)
	for _, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if d, err := dec.DecodeHeader(v); err == nil {
			v = d
		}
		switch strings.ToLower(k) {
		case "from":
			m.author, m.email = parseAddress(v)
		case "date":
			m.date = v
		case "subject":
			m.subject = cleanSubject(v)
		}
	}
	// the message ends at "---" or where the diff starts
	lines := strings.SplitAfter(body, "\n")
	var msg []string
	i := 0
	for ; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimRight(l, "\n")
		if strings.TrimRight(t, " \t") == "---" {
			break // the patch starts here, as mailinfo's does
		}
		if strings.HasPrefix(t, "diff -") || strings.HasPrefix(t, "Index: ") {
			break
		}
		msg = append(msg, t)
	}
	m.body = strings.Join(msg, "\n")
	m.patch = strings.Join(lines[i:], "")
	return m
}

func parseAddress(v string) (string, string) {
	name, email := v, ""
	if lt := strings.LastIndexByte(v, '<'); lt >= 0 {
		name = strings.TrimSpace(v[:lt])
		email = strings.TrimSuffix(strings.TrimSpace(v[lt+1:]), ">")
	} else if strings.Contains(v, "@") {
		return strings.TrimSpace(v), strings.TrimSpace(v)
	}
	if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
		name = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(name[1 : len(name)-1])
	}
	return name, email
}

// cleanSubject drops "Re:" and leading "[...]" tags, as mailinfo does.
func cleanSubject(s string) string {
	for {
		s = strings.TrimSpace(s)
		switch {
		case len(s) >= 3 && strings.EqualFold(s[:3], "re:"):
			s = s[3:]
		case strings.HasPrefix(s, "["):
			j := strings.IndexByte(s, ']')
			if j < 0 {
				return s
			}
			s = s[j+1:]
		default:
			return strings.Join(strings.Fields(s), " ")
		}
	}
}

// message is the commit message: subject, blank line, body, cleaned as
// git stripspace does.
func (m *mail) message() string {
	lines := strings.Split(m.subject+"\n\n"+m.body, "\n")
	var out []string
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
		}
		blank = false
		out = append(out, l)
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}
