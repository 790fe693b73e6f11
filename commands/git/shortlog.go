package git

import (
	"fmt"
	"sort"
	"strings"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// cmdShortlog groups the commits of one revision or range by author, as
// git shortlog does: "Name (N):" and the subjects oldest first, or with -s
// the counts alone; -n sorts by count, -e adds the email.
func cmdShortlog(s *session, args []string) error {
	summary, numbered, email := false, false, false
	var revs []string
	for _, a := range args {
		switch a {
		case "-s", "--summary":
			summary = true
		case "-n", "--numbered":
			numbered = true
		case "-e", "--email":
			email = true
		default:
			if strings.HasPrefix(a, "-") {
				// -c (committer), -w, --group, --format, --no-merges...
				return unknownOpt(a)
			}
			revs = append(revs, a)
		}
	}
	if len(revs) == 0 {
		// git reads a log from stdin when it is not a terminal, which in
		// a sandbox it never is
		return unsupported("without a revision (reads a log from stdin)")
	}
	if len(revs) > 1 {
		return unsupported("of several revisions")
	}
	if err := s.open(); err != nil {
		return err
	}
	if _, err := s.inv.FS.Lstat(s.root + "/.mailmap"); err == nil {
		return unsupported("with a .mailmap")
	}
	from, exclude := revs[0], ""
	if x, y, ok := strings.Cut(from, ".."); ok {
		from, exclude = y, x
		if from == "" {
			from = "HEAD"
		}
		if exclude == "" {
			exclude = "HEAD"
		}
	}
	h, err := s.resolve(from)
	if err != nil {
		return err
	}
	excluded := map[plumbing.Hash]bool{}
	if exclude != "" {
		xh, err := s.resolve(exclude)
		if err != nil {
			return err
		}
		ex, err := s.repo.Log(&gogit.LogOptions{From: xh})
		if err != nil {
			return err
		}
		if err := ex.ForEach(func(c *object.Commit) error { excluded[c.Hash] = true; return nil }); err != nil {
			return err
		}
	}
	iter, err := s.logFrom(h, false)
	if err != nil {
		return err
	}
	type group struct {
		name     string
		subjects []string
	}
	groups := map[string]*group{}
	err = iter.ForEach(func(c *object.Commit) error {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if excluded[c.Hash] {
			return nil
		}
		key := c.Author.Name
		if email {
			key += " <" + c.Author.Email + ">"
		}
		gr := groups[key]
		if gr == nil {
			gr = &group{name: key}
			groups[key] = gr
		}
		subject, _ := splitMessage(c.Message)
		if err := s.res.Grow(int64(len(subject) + 16)); err != nil {
			return err
		}
		gr.subjects = append(gr.subjects, subject)
		return nil
	})
	if err != nil {
		return err
	}
	list := make([]*group, 0, len(groups))
	for _, gr := range groups {
		list = append(list, gr)
	}
	sort.Slice(list, func(i, j int) bool {
		if numbered && len(list[i].subjects) != len(list[j].subjects) {
			return len(list[i].subjects) > len(list[j].subjects)
		}
		return list[i].name < list[j].name
	})
	for _, gr := range list {
		if summary {
			fmt.Fprintf(s.out, "%6d\t%s\n", len(gr.subjects), gr.name)
			continue
		}
		fmt.Fprintf(s.out, "%s (%d):\n", gr.name, len(gr.subjects))
		for i := len(gr.subjects) - 1; i >= 0; i-- {
			fmt.Fprintf(s.out, "      %s\n", gr.subjects[i])
		}
		s.out.WriteString("\n")
	}
	return nil
}
