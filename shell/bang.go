package shell

import "strings"

// bash's grammar takes `!` before a pipeline any number of times, each
// one toggling the negation, and `!` with no pipeline after it as a
// negated empty pipeline (status 1). mvdan's parser refuses both (`! !
// true`, a bare `!`), so a script it refuses gets them rewritten, lines
// kept: an even run of bangs goes (`! ! true` is `true` to bash, set -e
// and all), an odd run keeps one, and a run with no command after it
// gets the null command, `! :` or `:`.

// rewriteBangs returns src with those runs rewritten and whether it
// changed anything. Quoted text, comments and (( )) are left alone.
func rewriteBangs(src string) (string, bool) {
	if !strings.Contains(src, "!") {
		return src, false
	}
	var b strings.Builder
	changed, last := false, 0
	var quote byte
	var docs []bangDoc // here-documents whose bodies start at the next newline
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote == 0 && c == '\n' && len(docs) > 0:
			// a body's lines are text: a ! line there may be the delimiter
			i = skipHdocBodies(src, i+1, docs) - 1
			docs = docs[:0]
			continue
		case quote == 0 && c == '<' && strings.HasPrefix(src[i:], "<<") && !strings.HasPrefix(src[i:], "<<<"):
			if d, end, ok := readHdocDelim(src, i+2); ok {
				docs = append(docs, d)
				i = end - 1
			}
			continue
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		case c == '\\':
			i++
			continue
		case c == '\'' || c == '"' || c == '`':
			quote = c
			continue
		case c == '#' && (i == 0 || isTimeSep(src[i-1]) || src[i-1] == '\n'):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '(' && strings.HasPrefix(src[i:], "(("):
			// arithmetic: ! ! x is not x there
			if k := strings.Index(src[i:], "))"); k >= 0 {
				i += k + 1
			}
			continue
		}
		if c != '!' || !bangBoundary(src, i+1) || !(atCommandStart(src, i) || arithCmdStart(src, i)) {
			continue
		}
		n, j := 0, i // n bangs; j after the last
		for j < len(src) && src[j] == '!' && bangBoundary(src, j+1) {
			n++
			j++
			for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
				j++
			}
		}
		bare := j >= len(src) || src[j] == '\n' || src[j] == '#' ||
			src[j] == ';' && !strings.HasPrefix(src[j:], ";;") ||
			src[j] == '&' && !strings.HasPrefix(src[j:], "&&")
		if n < 2 && !bare {
			i = j - 1
			continue
		}
		// keep the span's blanks (and length), then the null command
		span := []byte(strings.Repeat(" ", j-i))
		if n%2 == 1 {
			span[0] = '!'
		}
		out := string(span)
		if bare {
			if n%2 == 1 {
				out = "! :" + out[min(len(out), 3):]
			} else {
				out = ":" + out[1:]
			}
			if j < len(src) && src[j] != '\n' && !strings.HasSuffix(out, " ") {
				out += " "
			}
		}
		b.WriteString(src[last:i] + out)
		last = j
		changed = true
		i = j - 1
	}
	if !changed {
		return src, false
	}
	b.WriteString(src[last:])
	return b.String(), true
}

// bangBoundary reports whether a `!` ending before src[i] is a word of
// its own.
func bangBoundary(src string, i int) bool {
	return i >= len(src) || strings.IndexByte(" \t\n;&", src[i]) >= 0
}

// bangDoc is a here-document's delimiter; strip is <<-'s.
type bangDoc struct {
	word  string
	strip bool
}

// readHdocDelim reads the delimiter word after << at i (quotes removed) and
// the offset after it.
func readHdocDelim(src string, i int) (bangDoc, int, bool) {
	d := bangDoc{}
	if i < len(src) && src[i] == '-' {
		d.strip = true
		i++
	}
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	var w strings.Builder
	for i < len(src) && strings.IndexByte(" \t\n;&|<>()", src[i]) < 0 {
		switch c := src[i]; c {
		case '\'', '"':
			k := strings.IndexByte(src[i+1:], c)
			if k < 0 {
				return d, i, false
			}
			w.WriteString(src[i+1 : i+1+k])
			i += k + 2
		case '\\':
			if i+1 < len(src) {
				w.WriteByte(src[i+1])
			}
			i += 2
		default:
			w.WriteByte(c)
			i++
		}
	}
	d.word = w.String()
	return d, min(i, len(src)), d.word != ""
}

// skipHdocBodies is the offset after the bodies of docs, which start at i.
func skipHdocBodies(src string, i int, docs []bangDoc) int {
	for _, d := range docs {
		for i < len(src) {
			line := src[i:]
			n := strings.IndexByte(line, '\n')
			if n >= 0 {
				line = line[:n]
			}
			if d.strip {
				line = strings.TrimLeft(line, "\t")
			}
			if n < 0 {
				i = len(src)
			} else {
				i += n + 1
			}
			if line == d.word {
				break
			}
		}
	}
	return i
}
