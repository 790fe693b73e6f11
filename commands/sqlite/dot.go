package sqlite

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/vfs"
)

// maxReadDepth bounds .read inside .read.
const maxReadDepth = 16

const dotHelp = `.bail on|off             Stop after hitting an error.  Default OFF
.databases               List names and files of attached databases
.dump ?TABLE?            Render database content as SQL
.echo on|off             Turn command echo on or off
.exit ?CODE?             Exit this program with return-code CODE
.headers on|off          Turn display of headers on or off
.help                    Show this message
.import FILE TABLE       Import data from FILE into TABLE (CSV)
.indexes ?TABLE?         Show names of indexes
.mode MODE ?TABLE?       Set output mode
.nullvalue STRING        Use STRING in place of NULL values
.once FILE               Output for the next SQL command only to FILE
.output ?FILE?           Send output to FILE or stdout if FILE is omitted
.print STRING...         Print literal STRING
.quit                    Exit this program
.read FILE               Read input from FILE
.schema ?PATTERN?        Show the CREATE statements matching PATTERN
.separator COL ?ROW?     Change the column and row separators
.show                    Show the current values for various settings
.tables ?TABLE?          List names of tables matching LIKE pattern TABLE
.timeout MS              Try opening locked tables for MS milliseconds
`

// usageError is a dot command's "Usage: ..." line, printed as it is.
type usageError string

func (e usageError) Error() string { return string(e) }

// meta runs one dot command.
func (s *state) meta(line string) error {
	args := splitMeta(strings.TrimPrefix(line, "."))
	if len(args) == 0 {
		return nil
	}
	cmd := args[0]
	unknown := fmt.Errorf("unknown command or invalid arguments:  %q. Enter \".help\" for help", cmd)
	onOff := func(usage string) (bool, error) {
		if len(args) != 2 {
			return false, usageError("Usage: " + usage)
		}
		switch strings.ToLower(args[1]) {
		case "on", "yes", "true", "1":
			return true, nil
		case "off", "no", "false", "0":
			return false, nil
		}
		return false, fmt.Errorf("ERROR: Not a boolean value: %q. Assuming \"no\".", args[1])
	}
	switch cmd {
	case "bail":
		b, err := onOff(".bail on|off")
		s.bail = b
		return err
	case "echo":
		b, err := onOff(".echo on|off")
		s.echo = b
		return err
	case "headers", "header":
		b, err := onOff(".headers on|off")
		if err == nil {
			s.headers, s.headersSet = b, true
		}
		return err
	case "help":
		s.out.WriteString(dotHelp)
	case "quit", "q":
		s.quit = true
	case "exit":
		s.quit = true
		if len(args) > 1 {
			n, _ := strconv.Atoi(args[1])
			s.quitRC = n & 0xff
		}
	case "mode":
		if len(args) == 1 {
			fmt.Fprintf(s.out, "current output mode: %s\n", s.mode)
			return nil
		}
		m := strings.ToLower(args[1])
		if !slices.Contains(modes, m) {
			return errors.New("mode should be one of: " + strings.Join(modes, " "))
		}
		table := ""
		if len(args) > 2 {
			table = args[2]
		}
		s.setMode(m, table, true)
	case "separator":
		if len(args) < 2 || len(args) > 3 {
			return usageError("Usage: .separator COL ?ROW?")
		}
		s.colSep = unescape(args[1])
		if len(args) == 3 {
			s.rowSep = unescape(args[2])
		}
	case "nullvalue":
		if len(args) != 2 {
			return usageError("Usage: .nullvalue STRING")
		}
		s.nullValue = unescape(args[1])
	case "print":
		s.out.WriteString(strings.Join(args[1:], " ") + "\n")
	case "show":
		fmt.Fprintf(s.out, "%12s: %s\n%12s: %s\n%12s: %s\n%12s: %q\n%12s: %q\n%12s: %q\n%12s: %s\n",
			"echo", onOffText(s.echo), "headers", onOffText(s.headers), "mode", s.mode,
			"nullvalue", s.nullValue, "colseparator", s.colSep, "rowseparator", s.rowSep,
			"filename", s.shownName())
	case "timeout":
		if len(args) != 2 {
			return usageError("Usage: .timeout MS")
		}
		ms, _ := strconv.Atoi(args[1])
		if err := s.open(); err != nil {
			return err
		}
		return s.conn.BusyTimeout(time.Duration(ms) * time.Millisecond)
	case "read":
		if len(args) != 2 {
			return usageError("Usage: .read FILE")
		}
		// A script that reads itself would recurse until the Go stack
		// overflows, which ends the whole process.
		if s.depth >= maxReadDepth {
			return &commands.DepthError{Limit: maxReadDepth}
		}
		f, err := s.inv.Open(args[1])
		if err != nil {
			return fmt.Errorf("cannot open %q", args[1])
		}
		defer f.Close()
		s.depth++
		defer func() { s.depth-- }()
		if n := s.process(f, args[1]); n > 0 {
			return errReported
		}
	case "output", "once":
		s.closeOutput()
		if len(args) == 1 {
			if cmd == "once" {
				return usageError("Usage: .once FILE")
			}
			return nil
		}
		f, err := s.inv.OpenFile(args[1], vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o666&^s.inv.Umask)
		if err != nil {
			return fmt.Errorf("cannot open %q", args[1])
		}
		s.out.Flush()
		s.outFile, s.once = f, cmd == "once"
		s.out.Reset(f)
	case "tables", "indexes", "indices", "schema", "databases", "dump", "import":
		if err := s.open(); err != nil {
			return err
		}
		switch cmd {
		case "tables":
			return s.tables(args[1:])
		case "indexes", "indices":
			return s.indexes(args[1:])
		case "schema":
			return s.schema(args[1:])
		case "databases":
			return s.databases()
		case "dump":
			return s.dump(args[1:])
		case "import":
			return s.importCSV(args[1:])
		}
	default:
		return unknown
	}
	return nil
}

// errReported is a failure whose message is already printed.
var errReported = errors.New("")

func onOffText(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func (s *state) shownName() string {
	if s.dbName == "" {
		return ":memory:"
	}
	return s.dbName
}

// endOnce ends a .once redirection after its statement.
func (s *state) endOnce() {
	if s.once {
		s.closeOutput()
	}
}

func (s *state) closeOutput() {
	if s.outFile == nil {
		return
	}
	s.out.Flush()
	s.outFile.Close()
	s.outFile, s.once = nil, false
	s.out.Reset(s.inv.Stdout)
}

// splitMeta splits a dot command's arguments as shell.c does: by spaces,
// with '...' and "..." quoting (the latter with C escapes).
func splitMeta(line string) []string {
	var args []string
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n') {
			i++
		}
		if i >= len(line) {
			break
		}
		switch q := line[i]; q {
		case '\'', '"':
			j := i + 1
			for j < len(line) && line[j] != q {
				if q == '"' && line[j] == '\\' && j+1 < len(line) {
					j++
				}
				j++
			}
			a := line[i+1 : min(j, len(line))]
			if q == '"' {
				a = unescape(a)
			}
			args = append(args, a)
			i = j + 1
		default:
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '\r' && line[j] != '\n' {
				j++
			}
			args = append(args, line[i:j])
			i = j
		}
	}
	return args
}

// query runs a statement with text arguments and calls fn for each row.
func (s *state) query(sql string, fn func(*sqlite3.Stmt) error, params ...string) error {
	st, _, err := s.conn.Prepare(sql)
	if err != nil {
		return err
	}
	defer st.Close()
	for i, p := range params {
		st.BindText(i+1, p)
	}
	for st.Step() {
		if err := fn(st); err != nil {
			return err
		}
	}
	return st.Err()
}

// schemas is the attached databases' names, main first.
func (s *state) schemas() ([]string, error) {
	var names []string
	err := s.query("SELECT name FROM pragma_database_list ORDER BY seq", func(st *sqlite3.Stmt) error {
		names = append(names, st.ColumnText(0))
		return nil
	})
	return names, err
}

func (s *state) tables(args []string) error {
	if len(args) > 1 {
		return usageError("Usage: .tables ?LIKE-PATTERN?")
	}
	pattern := "%"
	if len(args) == 1 {
		pattern = args[0]
	}
	schemas, err := s.schemas()
	if err != nil {
		return err
	}
	var names []string
	for _, sc := range schemas {
		prefix := ""
		if sc != "main" {
			prefix = sc + "."
		}
		q := fmt.Sprintf("SELECT name FROM %s.sqlite_schema WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%%' AND name LIKE ?1", quoteIdent(sc))
		err := s.query(q, func(st *sqlite3.Stmt) error {
			names = append(names, prefix+st.ColumnText(0))
			return nil
		}, pattern)
		if err != nil {
			return err
		}
	}
	slices.Sort(names)
	printInColumns(s.out, names)
	return nil
}

// printInColumns is shell.c's .tables layout: columns of the longest
// name's width filling 80 characters, filled top to bottom.
func printInColumns(w io.Writer, names []string) {
	if len(names) == 0 {
		return
	}
	maxLen := 0
	for _, n := range names {
		maxLen = max(maxLen, len(n))
	}
	cols := max(80/(maxLen+2), 1)
	rows := (len(names) + cols - 1) / cols
	for i := 0; i < rows; i++ {
		var b strings.Builder
		for j := i; j < len(names); j += rows {
			if j >= rows {
				b.WriteString("  ")
			}
			fmt.Fprintf(&b, "%-*s", maxLen, names[j])
		}
		fmt.Fprintln(w, b.String())
	}
}

func (s *state) indexes(args []string) error {
	pattern := "%"
	if len(args) == 1 {
		pattern = args[0]
	}
	var names []string
	err := s.query("SELECT name FROM sqlite_schema WHERE type='index' AND tbl_name LIKE ?1 ORDER BY 1", func(st *sqlite3.Stmt) error {
		names = append(names, st.ColumnText(0))
		return nil
	}, pattern)
	if err != nil {
		return err
	}
	printInColumns(s.out, names)
	return nil
}

func (s *state) schema(args []string) error {
	where := ""
	params := []string(nil)
	if len(args) > 0 && args[0] != "--indent" {
		where = " AND (lower(tbl_name) LIKE lower(?1) OR lower(name) LIKE lower(?1))"
		params = append(params, args[0])
	}
	schemas, err := s.schemas()
	if err != nil {
		return err
	}
	for _, sc := range schemas {
		q := fmt.Sprintf("SELECT sql FROM %s.sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%%'%s ORDER BY rowid", quoteIdent(sc), where)
		err := s.query(q, func(st *sqlite3.Stmt) error {
			fmt.Fprintf(s.out, "%s;\n", st.ColumnText(0))
			return nil
		}, params...)
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *state) databases() error {
	return s.query("SELECT name, file FROM pragma_database_list ORDER BY seq", func(st *sqlite3.Stmt) error {
		rw := "r/w"
		if ro, ok := s.conn.ReadOnly(st.ColumnText(0)); ok && ro {
			rw = "r/o"
		}
		fmt.Fprintf(s.out, "%s: %s %s\n", st.ColumnText(0), st.ColumnText(1), rw)
		return nil
	})
}

// dump writes the schema and every row as SQL that rebuilds the
// database, as shell.c's .dump does for tables, indexes, views and
// triggers.
func (s *state) dump(args []string) error {
	pattern := "%"
	if len(args) > 0 {
		pattern = args[0]
	}
	w := s.out
	w.WriteString("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n")
	type obj struct{ name, typ, sql string }
	var tables, others []obj
	err := s.query("SELECT name, type, sql FROM sqlite_schema WHERE sql NOT NULL AND tbl_name LIKE ?1 ORDER BY rowid", func(st *sqlite3.Stmt) error {
		o := obj{st.ColumnText(0), st.ColumnText(1), st.ColumnText(2)}
		if o.typ == "table" {
			tables = append(tables, o)
		} else {
			others = append(others, o)
		}
		return nil
	}, pattern)
	if err != nil {
		return err
	}
	seq := false
	for _, t := range tables {
		switch {
		case t.name == "sqlite_sequence":
			seq = true
			continue
		case strings.HasPrefix(t.name, "sqlite_stat"):
			w.WriteString("ANALYZE sqlite_schema;\n")
			continue
		case strings.HasPrefix(t.name, "sqlite_"):
			continue
		}
		fmt.Fprintf(w, "%s;\n", t.sql)
		if err := s.dumpRows(t.name); err != nil {
			return err
		}
	}
	if seq {
		w.WriteString("DELETE FROM sqlite_sequence;\n")
		if err := s.dumpRows("sqlite_sequence"); err != nil {
			return err
		}
	}
	for _, o := range others {
		if !strings.HasPrefix(o.name, "sqlite_") {
			fmt.Fprintf(w, "%s;\n", o.sql)
		}
	}
	w.WriteString("COMMIT;\n")
	return nil
}

func (s *state) dumpRows(table string) error {
	return s.query("SELECT * FROM "+quoteIdentAlways(table), func(st *sqlite3.Stmt) error {
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s VALUES(", quoteIdent(table))
		for i := 0; i < st.ColumnCount(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(s.quoted(s.value(st, i)))
		}
		b.WriteString(");\n")
		s.out.WriteString(b.String())
		return s.writeErr()
	})
}

func quoteIdentAlways(n string) string { return `"` + strings.ReplaceAll(n, `"`, `""`) + `"` }

// importCSV is .import [--csv] [--skip N] FILE TABLE: a missing table is
// created from the first row's names, every column TEXT.
func (s *state) importCSV(args []string) error {
	skip := 0
	asCSV := s.mode == "csv"
	var pos []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--csv", "-csv":
			asCSV = true
		case "--ascii":
		case "--skip", "-skip":
			if i+1 < len(args) {
				i++
				skip, _ = strconv.Atoi(args[i])
			}
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) != 2 {
		return usageError("Usage: .import [--csv] [--skip N] FILE TABLE")
	}
	file, table := pos[0], pos[1]
	f, err := s.inv.Open(file)
	if err != nil {
		return fmt.Errorf("cannot open \"%s\"", file)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	if !asCSV && len(s.colSep) == 1 {
		r.Comma = rune(s.colSep[0])
	}
	for range skip {
		if _, err := r.Read(); err != nil {
			return nil
		}
	}
	exists := false
	s.query("SELECT 1 FROM sqlite_schema WHERE type='table' AND name=?1", func(*sqlite3.Stmt) error { exists = true; return nil }, table)
	var ncols int
	if !exists {
		head, err := r.Read()
		if err != nil {
			return fmt.Errorf("%s: empty file", file)
		}
		cols := make([]string, len(head))
		for i, h := range head {
			cols[i] = quoteIdentAlways(h) + " TEXT"
		}
		if err := s.conn.Exec(fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s(\n%s)", quoteIdentAlways(table), strings.Join(cols, ", "))); err != nil {
			return fmt.Errorf("CREATE TABLE %s(...) failed: %s", table, message(err))
		}
		ncols = len(head)
	} else {
		s.query("SELECT count(*) FROM pragma_table_info(?1)", func(st *sqlite3.Stmt) error { ncols = st.ColumnInt(0); return nil }, table)
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", ncols), ",")
	ins, _, err := s.conn.Prepare(fmt.Sprintf("INSERT INTO %s VALUES(%s)", quoteIdentAlways(table), marks))
	if err != nil {
		return errors.New(message(err))
	}
	defer ins.Close()
	if err := s.conn.Exec("BEGIN"); err != nil {
		return errors.New(message(err))
	}
	line := skip + 1
	if !exists {
		line++
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.conn.Exec("ROLLBACK")
			return fmt.Errorf("%s:%d: %v", file, line, err)
		}
		if len(rec) != ncols {
			fmt.Fprintf(s.inv.Stderr, "%s:%d: expected %d columns but found %d - filling the rest with NULL\n", file, line, ncols, len(rec))
		}
		for i := 1; i <= ncols; i++ {
			if i <= len(rec) {
				ins.BindText(i, rec[i-1])
			} else {
				ins.BindNull(i)
			}
		}
		if err := ins.Exec(); err != nil {
			fmt.Fprintf(s.inv.Stderr, "%s:%d: INSERT failed: %s\n", file, line, message(err))
		}
		ins.Reset()
		line++
		if err := s.ctx.Err(); err != nil {
			s.conn.Exec("ROLLBACK")
			return err
		}
	}
	if err := s.conn.Exec("COMMIT"); err != nil {
		return errors.New(message(err))
	}
	return nil
}
