package git

import (
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// hunk replaces base lines [start, end) with lines; side is 'o' or 't'.
type hunk struct {
	start, end int
	lines      []string
	side       byte
}

// hunks lists the edits that turn base into other.
func hunks(base, other string, side byte) []hunk {
	var out []hunk
	pos := 0
	var cur *hunk
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, d := range diff.Do(base, other) {
		lines := splitLines(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			flush()
			pos += len(lines)
		case diffmatchpatch.DiffDelete:
			if cur == nil {
				cur = &hunk{start: pos, end: pos, side: side}
			}
			cur.end += len(lines)
			pos += len(lines)
		case diffmatchpatch.DiffInsert:
			if cur == nil {
				cur = &hunk{start: pos, end: pos, side: side}
			}
			cur.lines = append(cur.lines, lines...)
		}
	}
	flush()
	return out
}

// segment is a run of merged output: plain lines, or a conflict.
type segment struct {
	lines        []string
	conflict     bool
	ours, theirs []string
}

// apply rewrites base[s:e) with the hunks (all inside that range).
func apply(base []string, s, e int, hs []hunk) []string {
	var out []string
	pos := s
	for _, h := range hs {
		out = append(out, base[pos:h.start]...)
		out = append(out, h.lines...)
		pos = h.end
	}
	return append(out, base[pos:e]...)
}

// merge3 merges two edits of base line by line, as git's merge does:
// edits that overlap or touch on both sides conflict, identical lines at
// the edges of a conflict are taken out of it, and conflicts separated by
// three lines or fewer are joined. It returns the segments and the number
// of conflicts.
func merge3(base, ours, theirs string) ([]segment, int) {
	b := splitLines(base)
	all := append(hunks(base, ours, 'o'), hunks(base, theirs, 't')...)
	// order by start; at equal starts the shorter range first
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && (all[j].start < all[j-1].start || all[j].start == all[j-1].start && all[j].end < all[j-1].end); j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	var segs []segment
	pos := 0
	for i := 0; i < len(all); {
		// a cluster: hunks that overlap or touch, transitively
		s, e := all[i].start, all[i].end
		j := i + 1
		for j < len(all) && all[j].start <= e {
			e = max(e, all[j].end)
			j++
		}
		cluster := all[i:j]
		i = j
		var os, ts []hunk
		for _, h := range cluster {
			if h.side == 'o' {
				os = append(os, h)
			} else {
				ts = append(ts, h)
			}
		}
		segs = append(segs, segment{lines: b[pos:s]})
		pos = e
		ov, tv := apply(b, s, e, os), apply(b, s, e, ts)
		switch {
		case len(ts) == 0:
			segs = append(segs, segment{lines: ov})
			continue
		case len(os) == 0:
			segs = append(segs, segment{lines: tv})
			continue
		}
		// identical lines at both ends are not part of the conflict
		p := 0
		for p < len(ov) && p < len(tv) && ov[p] == tv[p] {
			p++
		}
		q := 0
		for q < len(ov)-p && q < len(tv)-p && ov[len(ov)-1-q] == tv[len(tv)-1-q] {
			q++
		}
		segs = append(segs, segment{lines: ov[:p]})
		if p < len(ov)-q || p < len(tv)-q {
			segs = append(segs, segment{conflict: true, ours: ov[p : len(ov)-q], theirs: tv[p : len(tv)-q]})
		}
		segs = append(segs, segment{lines: ov[len(ov)-q:]})
	}
	segs = append(segs, segment{lines: b[pos:]})
	// join conflicts separated by at most three plain lines
	var out []segment
	for _, sg := range segs {
		if !sg.conflict && len(sg.lines) == 0 {
			continue
		}
		n := len(out)
		if sg.conflict && n >= 2 && !out[n-1].conflict && out[n-2].conflict && len(out[n-1].lines) <= 3 {
			gap := out[n-1].lines
			prev := out[n-2]
			prev.ours = append(append(append([]string(nil), prev.ours...), gap...), sg.ours...)
			prev.theirs = append(append(append([]string(nil), prev.theirs...), gap...), sg.theirs...)
			out = append(out[:n-2], prev)
			continue
		}
		if !sg.conflict && n > 0 && !out[n-1].conflict {
			out[n-1].lines = append(append([]string(nil), out[n-1].lines...), sg.lines...)
			continue
		}
		out = append(out, sg)
	}
	conflicts := 0
	for _, sg := range out {
		if sg.conflict {
			conflicts++
		}
	}
	return out, conflicts
}

// render writes the merged text, with git's conflict markers.
func render(segs []segment, oursLabel, theirsLabel string) string {
	var b strings.Builder
	line := func(l string) {
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n")
		}
	}
	for _, sg := range segs {
		if !sg.conflict {
			for _, l := range sg.lines {
				b.WriteString(l)
			}
			continue
		}
		b.WriteString("<<<<<<< " + oursLabel + "\n")
		for _, l := range sg.ours {
			line(l)
		}
		b.WriteString("=======\n")
		for _, l := range sg.theirs {
			line(l)
		}
		b.WriteString(">>>>>>> " + theirsLabel + "\n")
	}
	return b.String()
}
