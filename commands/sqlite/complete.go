package sqlite

import "strings"

// complete reports whether sql ends with a complete statement: a ';'
// outside quotes, identifiers and comments, and, for CREATE TRIGGER, after
// the body's END (sqlite3_complete's rules, which ncruces does not export).
func complete(sql string) bool {
	var words []string // the current statement's first words and its last
	ended := false
	trigger := false
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ';':
			if !trigger || len(words) > 0 && words[len(words)-1] == "END" {
				ended, words, trigger = true, words[:0], false
			} else {
				words = append(words, ";")
			}
			i++
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return false
			}
			i += end + 4
			continue
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closer := c
			if c == '[' {
				closer = ']'
			}
			j := i + 1
			for {
				k := strings.IndexByte(sql[j:], closer)
				if k < 0 {
					return false
				}
				j += k + 1
				if closer != ']' && j < len(sql) && sql[j] == closer {
					j++ // a doubled quote is part of the string
					continue
				}
				break
			}
			words = append(words, "?")
			i = j
		default:
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			if j == i {
				j++
			}
			w := strings.ToUpper(sql[i:j])
			words = append(words, w)
			// CREATE [TEMP|TEMPORARY] TRIGGER: the body's ';' do not end it.
			if w == "TRIGGER" && len(words) >= 2 && words[0] == "CREATE" && (len(words) == 2 || len(words) == 3 && (words[1] == "TEMP" || words[1] == "TEMPORARY")) {
				trigger = true
			}
			i = j
		}
		ended = false
	}
	return ended
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
