package sqlite

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3"
)

// modes are the output modes, as .mode names them.
var modes = []string{"box", "column", "csv", "insert", "json", "line", "list", "markdown", "quote", "table", "tabs"}

// setMode switches the output mode; fromDot is .mode (which also sets the
// separators and, for the columnar modes, turns headers on unless they
// were set), as shell.c does.
func (s *state) setMode(mode, table string, fromDot bool) {
	s.mode = mode
	switch mode {
	case "list":
		if fromDot {
			s.colSep, s.rowSep = "|", "\n"
		}
	case "tabs":
		s.mode = "list"
		s.colSep = "\t"
		if fromDot {
			s.rowSep = "\n"
		}
	case "csv":
		s.colSep, s.rowSep = ",", "\r\n"
	case "quote":
		s.colSep = ","
	case "insert":
		s.insertTable = table
		if s.insertTable == "" {
			s.insertTable = "table"
		}
	case "column":
		if fromDot && !s.headersSet {
			s.headers = true
		}
	}
}

// cell is one value, kept with its type for the modes that quote.
type cell struct {
	typ  sqlite3.Datatype
	text string
	num  float64
}

// print steps stmt and writes its rows. Columnar modes (column, table,
// box, markdown) hold every row to size the columns, charged to the
// sandbox's memory budget.
func (s *state) print(stmt *sqlite3.Stmt) error {
	n := stmt.ColumnCount()
	names := make([]string, n)
	for i := range names {
		names[i] = stmt.ColumnName(i)
	}
	columnar := s.mode == "column" || s.mode == "table" || s.mode == "box" || s.mode == "markdown"
	var rows [][]cell
	var held int64
	defer func() { s.res.Shrink(held) }()
	count := 0
	for stmt.Step() {
		row := make([]cell, n)
		size := int64(0)
		for i := range row {
			row[i] = s.value(stmt, i)
			size += int64(len(row[i].text)) + 32
		}
		if columnar {
			if err := s.res.Grow(size); err != nil {
				return err
			}
			held += size
			rows = append(rows, row)
			continue
		}
		if err := s.printRow(names, row, count); err != nil {
			return err
		}
		count++
		if err := s.ctx.Err(); err != nil {
			return err
		}
	}
	if err := stmt.Err(); err != nil {
		if count > 0 && s.mode == "json" {
			s.out.WriteString("]\n")
		}
		return &stepError{err: err}
	}
	if columnar {
		s.printColumns(names, rows)
	} else if count > 0 && s.mode == "json" {
		s.out.WriteString("]\n")
	}
	return s.writeErr()
}

// writeErr stops a statement whose output cannot be written (the
// sandbox's output limit, a closed pipe).
func (s *state) writeErr() error {
	if s.out.Buffered() > 16<<10 {
		return s.out.Flush()
	}
	return nil
}

func (s *state) value(stmt *sqlite3.Stmt, i int) cell {
	t := stmt.ColumnType(i)
	c := cell{typ: t}
	switch t {
	case sqlite3.NULL:
	case sqlite3.FLOAT:
		c.num = stmt.ColumnFloat(i)
		c.text = stmt.ColumnText(i)
	case sqlite3.BLOB:
		c.text = string(stmt.ColumnRawBlob(i))
	default:
		c.text = stmt.ColumnText(i)
	}
	return c
}

func (s *state) printRow(names []string, row []cell, count int) error {
	w := s.out
	switch s.mode {
	case "list":
		if count == 0 && s.headers {
			w.WriteString(strings.Join(names, s.colSep))
			w.WriteString(s.rowSep)
		}
		for i, c := range row {
			if i > 0 {
				w.WriteString(s.colSep)
			}
			w.WriteString(s.plain(c))
		}
		w.WriteString(s.rowSep)
	case "csv":
		if count == 0 && s.headers {
			for i, n := range names {
				if i > 0 {
					w.WriteString(s.colSep)
				}
				w.WriteString(s.csvField(n, false))
			}
			w.WriteString(s.rowSep)
		}
		for i, c := range row {
			if i > 0 {
				w.WriteString(s.colSep)
			}
			w.WriteString(s.csvField(c.text, c.typ == sqlite3.NULL))
		}
		w.WriteString(s.rowSep)
	case "line":
		width := 5
		for _, n := range names {
			width = max(width, utf8.RuneCountInString(n))
		}
		if count > 0 {
			w.WriteString(s.rowSep)
		}
		for i, c := range row {
			fmt.Fprintf(w, "%*s = %s%s", width, names[i], s.plain(c), s.rowSep)
		}
	case "json":
		if count == 0 {
			w.WriteString("[{")
		} else {
			w.WriteString(",\n{")
		}
		for i, c := range row {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(jsonString(names[i]))
			w.WriteByte(':')
			switch c.typ {
			case sqlite3.NULL:
				w.WriteString("null")
			case sqlite3.INTEGER:
				w.WriteString(c.text)
			case sqlite3.FLOAT:
				w.WriteString(s.float(c.num))
			default:
				w.WriteString(jsonString(c.text))
			}
		}
		w.WriteByte('}')
	case "quote":
		if count == 0 && s.headers {
			for i, n := range names {
				if i > 0 {
					w.WriteString(s.colSep)
				}
				w.WriteString(sqlQuote(n))
			}
			w.WriteString(s.rowSep)
		}
		for i, c := range row {
			if i > 0 {
				w.WriteString(s.colSep)
			}
			w.WriteString(s.quoted(c))
		}
		w.WriteString(s.rowSep)
	case "insert":
		fmt.Fprintf(w, "INSERT INTO %s", quoteIdent(s.insertTable))
		if s.headers {
			w.WriteByte('(')
			for i, n := range names {
				if i > 0 {
					w.WriteByte(',')
				}
				w.WriteString(quoteIdent(n))
			}
			w.WriteByte(')')
		}
		w.WriteString(" VALUES(")
		for i, c := range row {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(s.quoted(c))
		}
		w.WriteString(");\n")
	}
	return s.writeErr()
}

// plain is a value as the list and line modes print it.
func (s *state) plain(c cell) string {
	if c.typ == sqlite3.NULL {
		return s.nullValue
	}
	return c.text
}

// float renders a REAL the way the shell's json, quote and insert modes
// do: C's "%.20g" with SQLite's "!" flag (a ".0" on integral values),
// infinities as 1e999.
func (s *state) float(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "1e999"
	case math.IsInf(f, -1):
		return "-1e999"
	}
	t := strconv.FormatFloat(f, 'g', 20, 64)
	if strings.ContainsAny(t, ".n") { // has a point, or is NaN
		return t
	}
	if i := strings.IndexByte(t, 'e'); i >= 0 {
		return t[:i] + ".0" + t[i:]
	}
	return t + ".0"
}

func (s *state) quoted(c cell) string {
	switch c.typ {
	case sqlite3.NULL:
		return "NULL"
	case sqlite3.INTEGER:
		return c.text
	case sqlite3.FLOAT:
		return s.float(c.num)
	case sqlite3.BLOB:
		return fmt.Sprintf("X'%x'", c.text)
	}
	return sqlQuote(c.text)
}

func sqlQuote(t string) string { return "'" + strings.ReplaceAll(t, "'", "''") + "'" }

// quoteIdent quotes an identifier only when it needs it, as shell.c's
// insert mode does.
func quoteIdent(n string) string {
	plain := n != "" && !(n[0] >= '0' && n[0] <= '9')
	for i := 0; i < len(n) && plain; i++ {
		c := n[i]
		plain = c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if plain {
		return n
	}
	return `"` + strings.ReplaceAll(n, `"`, `""`) + `"`
}

// csvField quotes a field as shell.c's output_csv: when it is empty or
// holds a space, control character, quote, non-ASCII byte or the column
// separator.
func (s *state) csvField(t string, null bool) string {
	if null {
		return s.nullValue
	}
	quote := t == "" || strings.Contains(t, s.colSep)
	for i := 0; i < len(t) && !quote; i++ {
		c := t[i]
		quote = c <= ' ' || c == '"' || c == '\'' || c >= 0x7f
	}
	if !quote {
		return t
	}
	return `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
}

// jsonString is shell.c's output_json_string.
func jsonString(t string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// printColumns prints the columnar modes once every row is known.
func (s *state) printColumns(names []string, rows [][]cell) {
	if len(rows) == 0 {
		return
	}
	w := s.out
	n := len(names)
	text := func(c cell) string {
		if c.typ == sqlite3.NULL {
			return s.nullValue
		}
		if c.typ == sqlite3.BLOB {
			return c.text
		}
		return c.text
	}
	widths := make([]int, n)
	showHeader := s.headers || s.mode != "column"
	for i, name := range names {
		if showHeader {
			widths[i] = utf8.RuneCountInString(name)
		}
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(text(c)))
		}
	}
	pad := func(t string, width int) string {
		return t + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(t)))
	}
	center := func(t string, width int) string {
		l := utf8.RuneCountInString(t)
		left := (width - l) / 2
		return strings.Repeat(" ", max(0, left)) + t + strings.Repeat(" ", max(0, width-l-left))
	}
	rule := func(l, mid, r, fill string) {
		w.WriteString(l)
		for i, wd := range widths {
			if i > 0 {
				w.WriteString(mid)
			}
			w.WriteString(strings.Repeat(fill, wd+2))
		}
		w.WriteString(r + "\n")
	}
	line := func(cells []string, l, mid, r string, header bool) {
		w.WriteString(l)
		for i, t := range cells {
			if i > 0 {
				w.WriteString(mid)
			}
			if header {
				w.WriteString(center(t, widths[i]))
			} else {
				w.WriteString(pad(t, widths[i]))
			}
		}
		w.WriteString(r + "\n")
	}
	vals := func(r []cell) []string {
		out := make([]string, n)
		for i, c := range r {
			out[i] = text(c)
		}
		return out
	}
	switch s.mode {
	case "column":
		if s.headers {
			for i, name := range names {
				if i > 0 {
					w.WriteString("  ")
				}
				w.WriteString(pad(name, widths[i]))
			}
			w.WriteString(s.rowSep)
			for i := range names {
				if i > 0 {
					w.WriteString("  ")
				}
				w.WriteString(strings.Repeat("-", widths[i]))
			}
			w.WriteString(s.rowSep)
		}
		for _, r := range rows {
			for i, t := range vals(r) {
				if i > 0 {
					w.WriteString("  ")
				}
				w.WriteString(pad(t, widths[i]))
			}
			w.WriteString(s.rowSep)
		}
	case "table":
		rule("+", "+", "+", "-")
		line(names, "| ", " | ", " |", true)
		rule("+", "+", "+", "-")
		for _, r := range rows {
			line(vals(r), "| ", " | ", " |", false)
		}
		rule("+", "+", "+", "-")
	case "box":
		rule("┌", "┬", "┐", "─")
		line(names, "│ ", " │ ", " │", true)
		rule("├", "┼", "┤", "─")
		for _, r := range rows {
			line(vals(r), "│ ", " │ ", " │", false)
		}
		rule("└", "┴", "┘", "─")
	case "markdown":
		line(names, "| ", " | ", " |", true)
		w.WriteString("|")
		for i, wd := range widths {
			if i > 0 {
				w.WriteString("|")
			}
			w.WriteString(strings.Repeat("-", wd+2))
		}
		w.WriteString("|\n")
		for _, r := range rows {
			line(vals(r), "| ", " | ", " |", false)
		}
	}
}
