package sqlite

import "strings"

// complete reports whether sql ends with a complete statement: a ';'
// outside quotes, identifiers and comments, and, for CREATE TRIGGER, after
// the body's END (sqlite3_complete's rules, which ncruces does not export).
func complete(sql string) bool {
	var c completer
	return c.feed(sql)
}

// completer is complete fed a script line by line, so that a long
// statement is scanned once, not once per line.
type completer struct {
	quote   byte // the closing quote of an open string or identifier; 0: none
	comment bool // in a /* */ comment
	first   []string
	last    string
	trigger bool
	ended   bool
}

func (c *completer) reset() { *c = completer{} }

// feed scans more of the statement and reports whether it now ends.
func (c *completer) feed(sql string) bool {
	for i := 0; i < len(sql); {
		ch := sql[i]
		switch {
		case c.comment:
			end := strings.Index(sql[i:], "*/")
			if end < 0 {
				return false
			}
			c.comment = false
			i += end + 2
			continue
		case c.quote != 0:
			k := strings.IndexByte(sql[i:], c.quote)
			if k < 0 {
				return false
			}
			i += k + 1
			if c.quote != ']' && i < len(sql) && sql[i] == c.quote {
				i++ // a doubled quote is part of the string
				continue
			}
			c.quote = 0
			c.word("?")
			continue
		case ch == ';':
			if !c.trigger || c.last == "END" {
				c.reset()
				c.ended = true
			} else {
				c.word(";")
			}
			i++
			continue
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v':
			i++
			continue
		case ch == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			continue
		case ch == '/' && i+1 < len(sql) && sql[i+1] == '*':
			c.comment = true
			c.ended = false
			i += 2
			continue
		case ch == '\'' || ch == '"' || ch == '`' || ch == '[':
			c.quote = ch
			if ch == '[' {
				c.quote = ']'
			}
			c.ended = false
			i++
			continue
		}
		j := i
		for j < len(sql) && isWordByte(sql[j]) {
			j++
		}
		if j == i {
			j++
		}
		c.word(strings.ToUpper(sql[i:j]))
		i = j
	}
	return c.ended && !c.comment && c.quote == 0
}

// word notes a token: the first three (CREATE [TEMP] TRIGGER) and the last.
func (c *completer) word(w string) {
	c.ended = false
	if len(c.first) < 3 {
		c.first = append(c.first, w)
		f := c.first
		if w == "TRIGGER" && f[0] == "CREATE" && (len(f) == 2 || f[1] == "TEMP" || f[1] == "TEMPORARY") {
			c.trigger = true
		}
	}
	c.last = w
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// allWhitespace reports whether a line holds only spaces and comments,
// which the shell skips between statements.
func allWhitespace(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			return true
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return false
			}
			i += end + 3
		default:
			return false
		}
	}
	return true
}
