// Package sqlite is the resident sqlite3 command: SQLite (github.com/
// ncruces/go-sqlite3, SQLite compiled to WebAssembly and translated to Go
// by wasm2go, so it needs no wazero runtime and no cgo) with its OS
// interface over the sandbox's vfs. Databases, journals and WAL files are
// vfs files: they land in the delta and survive hibernate and fork. The
// command line follows SQLite's own shell (shell.c of 3.40, Debian
// bookworm's): options, SQL arguments, stdin scripts, the common dot
// commands and output modes, and its error messages and exit statuses.
//
// Left out: interactive line editing, .archive, .clone, .backup/.restore,
// .load (no extensions), .shell/.system (the shell has its own), and WAL
// mode with shared memory (WAL works with PRAGMA locking_mode=EXCLUSIVE,
// which keeps the WAL index in the connection's memory).
package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/ncruces/go-sqlite3"
	"github.com/warren-sandbox/warren/commands"
)

// Register adds sqlite3 to t.
func Register(t commands.Table) { t.Register("sqlite3", commands.Reserving(Run)) }

// DefaultMemoryBytes bounds one connection's SQLite memory (its wasm
// linear memory: page cache, sorter, statements) when the sandbox's budget
// has twice that much left. It is charged to the budget when the database is
// opened, since the connection's heap cannot be observed as it grows.
const DefaultMemoryBytes = 64 << 20

// minMemoryBytes is the least a connection is opened with.
const minMemoryBytes = 4 << 20

const usage = `Usage: sqlite3 [OPTIONS] FILENAME [SQL]
FILENAME is the name of an SQLite database. A new database is created
if the file does not previously exist.
OPTIONS include:
   -bail                stop after hitting an error
   -batch               force batch I/O
   -box                 set output mode to 'box'
   -column              set output mode to 'column'
   -cmd COMMAND         run "COMMAND" before reading stdin
   -csv                 set output mode to 'csv'
   -echo                print inputs before execution
   -[no]header          turn headers on or off
   -help                show this message
   -json                set output mode to 'json'
   -line                set output mode to 'line'
   -list                set output mode to 'list'
   -markdown            set output mode to 'markdown'
   -newline SEP         set output row separator. Default: '\n'
   -nullvalue TEXT      set text string for NULL values. Default ''
   -quote               set output mode to 'quote'
   -readonly            open the database read-only
   -separator SEP       set output column separator. Default: '|'
   -table               set output mode to 'table'
   -tabs                set output mode to 'tabs'
   -version             show SQLite version
`

// state is one run of the shell: its connection and its settings.
type state struct {
	ctx context.Context
	inv *commands.Invocation

	dbName   string
	readonly bool
	conn     *sqlite3.Conn
	closeVFS func()
	res      *commands.Reservation
	memCap   int64

	out     *bufio.Writer
	outFile commands.File // .output FILE; nil is stdout
	once    bool          // .once: back to stdout after the next statement

	mode        string
	insertTable string
	headers     bool
	headersSet  bool
	colSep      string
	rowSep      string
	nullValue   string
	bail        bool
	echo        bool

	quit   bool
	quitRC int
	depth  int // .read nesting
}

// oomError is what a panic of ncruces's out-of-memory check is turned
// into: SQLite ran out of the connection's memory.
type oomError struct{ limit int64 }

func (e oomError) Error() string {
	return fmt.Sprintf("warren: sqlite3: memory limit (%d MiB) reached", e.limit>>20)
}

// Run is the sqlite3 command.
func Run(ctx context.Context, inv *commands.Invocation) (rc int) {
	s := &state{ctx: ctx, inv: inv, res: commands.ReservationFrom(ctx), mode: "list", colSep: "|", rowSep: "\n",
		out: bufio.NewWriterSize(inv.Stdout, 32<<10)}
	defer func() {
		// ncruces panics when SQLite reports SQLITE_NOMEM; the connection
		// is then unusable, so it is dropped with the panic.
		if p := recover(); p != nil {
			if !isOOM(p) {
				panic(p)
			}
			s.out.Flush()
			fmt.Fprintln(inv.Stderr, oomError{s.memCap}.Error())
			s.dropConn()
			rc = commands.StatusLimit
		}
		s.close()
	}()
	var sqls []string
	var cmds []string
	args := inv.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if s.dbName == "" && len(sqls) == 0 {
				s.dbName = a
			} else {
				sqls = append(sqls, a)
			}
			continue
		}
		opt := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		needArg := func() (string, bool) {
			if i+1 >= len(args) {
				fmt.Fprintf(inv.Stderr, "%s: Error: missing argument to %s\n", inv.Args[0], a)
				return "", false
			}
			i++
			return args[i], true
		}
		switch opt {
		case "bail":
			s.bail = true
		case "batch", "nofollow", "safe":
		case "echo":
			s.echo = true
		case "header", "headers":
			s.headers, s.headersSet = true, true
		case "noheader", "noheaders":
			s.headers, s.headersSet = false, true
		case "readonly":
			s.readonly = true
		case "help":
			fmt.Fprint(inv.Stderr, usage)
			return 0
		case "version":
			v, err := version()
			if err != nil {
				fmt.Fprintf(inv.Stderr, "Error: %s\n", message(err))
				return 1
			}
			fmt.Fprintln(inv.Stdout, v)
			return 0
		case "list", "line", "column", "csv", "json", "quote", "tabs", "table", "box", "markdown":
			s.setMode(opt, "", false)
			if opt == "csv" {
				s.rowSep = "\n" // -csv keeps '\n', .mode csv uses "\r\n" as shell.c does
			}
		case "separator", "newline", "nullvalue", "cmd":
			v, ok := needArg()
			if !ok {
				return 1
			}
			switch opt {
			case "separator":
				s.colSep = unescape(v)
			case "newline":
				s.rowSep = unescape(v)
			case "nullvalue":
				s.nullValue = unescape(v)
			case "cmd":
				cmds = append(cmds, v)
			}
		default:
			fmt.Fprintf(inv.Stderr, "%s: Error: unknown option: %s\nUse -help for a list of options.\n", inv.Args[0], a)
			return 1
		}
	}
	for _, c := range cmds {
		if rc := s.runArg(c); rc != 0 && s.bail {
			return rc
		}
	}
	if len(sqls) > 0 {
		for _, a := range sqls {
			if s.quit {
				break
			}
			if rc := s.runArg(a); rc != 0 {
				return rc
			}
		}
		return s.quitRC
	}
	if s.quit {
		return s.quitRC
	}
	errs := s.process(inv.Stdin, "")
	if s.quit {
		return s.quitRC
	}
	if errs > 0 {
		return 1
	}
	return 0
}

func isOOM(p any) bool {
	err, ok := p.(error)
	return ok && (errors.Is(err, sqlite3.NOMEM) || strings.Contains(err.Error(), "out of memory"))
}

// version is the SQLite version line of `sqlite3 -version`.
func version() (string, error) {
	c, err := sqlite3.Open(":memory:")
	if err != nil {
		return "", err
	}
	defer c.Close()
	st, _, err := c.Prepare("SELECT sqlite_version() || ' ' || sqlite_source_id()")
	if err != nil {
		return "", err
	}
	defer st.Close()
	if !st.Step() {
		return "", st.Err()
	}
	return st.ColumnText(0), nil
}

// dropConn closes a connection that ran out of memory mid-call, as far
// as it can be closed (its wasm memory is unmapped when it is).
func (s *state) dropConn() {
	c := s.conn
	s.conn = nil
	if c == nil {
		return
	}
	defer func() { recover() }()
	c.Close()
}

// close flushes the output and closes the database.
func (s *state) close() {
	s.flush()
	s.closeOutput()
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	if s.closeVFS != nil {
		s.closeVFS()
		s.closeVFS = nil
	}
}

func (s *state) flush() error { return s.out.Flush() }

// open opens the database on first use, as shell.c does.
func (s *state) open() error {
	if s.conn != nil {
		return nil
	}
	name := s.dbName
	if name == "" {
		name = ":memory:"
	}
	// The memory SQLite may use is charged before it is granted: the
	// default, or half of what the budget has left (the other half is for
	// what the shell holds: columnar output, temporary files, scripts).
	want := int64(DefaultMemoryBytes)
	if m := s.inv.Memory(); m != nil && m.Max() > 0 {
		want = min(want, (m.Max()-m.Used())/2)
	}
	if want < minMemoryBytes {
		want = minMemoryBytes
	}
	if err := s.res.Grow(want); err != nil {
		return err
	}
	s.memCap = want

	v := &sandboxVFS{fs: s.inv.FS, dir: s.inv.Dir, res: s.res}
	vname, unregister := v.register()
	s.closeVFS = unregister
	q := url.Values{"vfs": {vname}}
	var uri string
	if name == ":memory:" {
		uri = "file::memory:"
	} else {
		uri = "file:" + escapePath(s.inv.Abs(name))
	}
	if s.readonly {
		q.Set("mode", "ro") // the URI's mode wins over OpenContext's read-write
	}
	uri += "?" + q.Encode()
	ctx := sqlite3.WithMaxMemory(context.WithoutCancel(s.ctx), want)
	conn, err := sqlite3.OpenContext(ctx, uri)
	if err != nil {
		return fmt.Errorf("unable to open database %q: %s", name, message(err))
	}
	s.conn = conn
	conn.SetInterrupt(s.ctx)
	// SQLite's heap stays under the connection's memory, so a big query
	// ends in SQLITE_NOMEM rather than a failed wasm memory growth.
	conn.HardHeapLimit(want - want/8)
	// Double-quoted strings as literals, as Debian's sqlite3 accepts them
	// (this build of SQLite turns them off by default).
	conn.Config(sqlite3.DBCONFIG_DQS_DML, true)
	conn.Config(sqlite3.DBCONFIG_DQS_DDL, true)
	// URI filenames in ATTACH and VACUUM INTO could name another VFS
	// (ncruces's "os" VFS is the host filesystem); plain names use this
	// connection's.
	conn.SetAuthorizer(func(action sqlite3.AuthorizerActionCode, name3rd, _, _, _ string) sqlite3.AuthorizerReturnCode {
		if action == sqlite3.AUTH_ATTACH && hasURIPrefix(name3rd) {
			return sqlite3.AUTH_DENY
		}
		return sqlite3.AUTH_OK
	})
	return nil
}

func hasURIPrefix(name string) bool {
	return len(name) >= 5 && strings.EqualFold(name[:5], "file:")
}

// escapePath quotes what a URI filename's path may not hold.
func escapePath(p string) string {
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

// message is an error as shell.c prints it: SQLite's message without the
// Go wrapper's "sqlite3: CODE TEXT: " prefix.
func message(err error) string {
	var se *sqlite3.Error
	if errors.As(err, &se) {
		s := se.Error()
		// The OS error behind a failed open is the VFS's (a vfs path
		// error); the shell prints SQLite's words only.
		if sys := se.Unwrap(); sys != nil {
			s = strings.TrimSuffix(s, ": "+sys.Error())
		}
		for _, p := range []string{se.ExtendedCode().Error(), se.Code().Error()} {
			if rest, ok := strings.CutPrefix(s, p+": "); ok {
				return rest
			}
		}
		return strings.TrimPrefix(s, "sqlite3: ")
	}
	var ec sqlite3.ErrorCode
	var xc sqlite3.ExtendedErrorCode
	if errors.As(err, &xc) || errors.As(err, &ec) {
		return strings.TrimPrefix(err.Error(), "sqlite3: ")
	}
	return err.Error()
}

// code is the primary result code of err (1 when it has none).
func code(err error) int {
	var se *sqlite3.Error
	if errors.As(err, &se) {
		return int(se.Code())
	}
	var xc sqlite3.ExtendedErrorCode
	if errors.As(err, &xc) {
		return int(xc.Code())
	}
	var ec sqlite3.ErrorCode
	if errors.As(err, &ec) {
		return int(ec)
	}
	return 1
}

// runArg runs one command-line argument (SQL or a dot command) and
// returns the exit status shell.c would: the SQLite result code of a
// failed statement, 1 for other errors.
func (s *state) runArg(a string) int {
	if strings.HasPrefix(a, ".") {
		err := s.meta(a)
		s.flush()
		if err != nil {
			s.reportMeta(err)
			return 1
		}
		return 0
	}
	err := s.exec(a)
	s.flush()
	if err == nil {
		return 0
	}
	if st, ok := s.inv.LimitExceeded(err); ok {
		return st
	}
	var pe *prepareError
	var se *stepError
	switch {
	case errors.As(err, &pe):
		fmt.Fprintf(s.inv.Stderr, "Error: in prepare, %s%s\n", message(pe.err), pe.context)
		return 1
	case errors.As(err, &se):
		fmt.Fprintf(s.inv.Stderr, "Error: stepping, %s (%d)\n", message(se.err), code(se.err))
		return code(se.err)
	}
	fmt.Fprintf(s.inv.Stderr, "Error: %s\n", message(err))
	return 1
}

func (s *state) reportMeta(err error) {
	if _, ok := s.inv.LimitExceeded(err); ok {
		return
	}
	var ue usageError
	switch {
	case errors.Is(err, errReported):
	case errors.As(err, &ue):
		fmt.Fprintln(s.inv.Stderr, ue)
	default:
		fmt.Fprintf(s.inv.Stderr, "Error: %s\n", message(err))
	}
}

// process runs a script (stdin, .read) line by line: dot commands on
// lines of their own, SQL collected until it is a complete statement. It
// returns the number of errors.
func (s *state) process(r io.Reader, _ string) int {
	br := bufio.NewReader(r)
	var sql strings.Builder
	var scan completer
	var held int64 // charged for the statement being collected
	defer func() { s.res.Shrink(held) }()
	lineNo, start, errs := 0, 0, 0
	runSQL := func() bool {
		text := sql.String()
		sql.Reset()
		scan.reset()
		defer func() { s.res.Shrink(held); held = 0 }()
		if s.echo {
			fmt.Fprintln(s.out, text)
		}
		err := s.exec(text)
		s.flush()
		if err == nil {
			return true
		}
		errs++
		if _, ok := s.inv.LimitExceeded(err); ok {
			s.quit, s.quitRC = true, commands.StatusLimit
			return false
		}
		var pe *prepareError
		var se *stepError
		switch {
		case errors.As(err, &pe):
			fmt.Fprintf(s.inv.Stderr, "Parse error near line %d: %s%s\n", start, message(pe.err), pe.context)
		case errors.As(err, &se):
			fmt.Fprintf(s.inv.Stderr, "Runtime error near line %d: %s (%d)\n", start, message(se.err), code(se.err))
		default:
			fmt.Fprintf(s.inv.Stderr, "Error: near line %d: %s\n", start, message(err))
		}
		return !s.bail
	}
	for !s.quit && s.ctx.Err() == nil {
		line, n, err := s.readLine(br)
		held += n
		if err != nil && !errors.Is(err, io.EOF) {
			if _, ok := s.inv.LimitExceeded(err); ok {
				s.quit, s.quitRC = true, commands.StatusLimit
				return errs + 1
			}
			fmt.Fprintf(s.inv.Stderr, "Error: %v\n", err)
			return errs + 1
		}
		if line == "" && err != nil {
			break
		}
		lineNo++
		body := strings.TrimRight(line, "\r\n")
		if sql.Len() == 0 {
			s.res.Shrink(held) // a line kept is charged again as part of the statement below
			held = 0
			if allWhitespace(body) {
				continue
			}
			if strings.HasPrefix(body, ".") {
				if s.echo {
					fmt.Fprintln(s.out, body)
				}
				if err := s.meta(body); err != nil {
					s.flush()
					s.reportMeta(err)
					errs++
					if s.bail {
						break
					}
				}
				s.flush()
				continue
			}
			start = lineNo
			if err := s.res.Grow(int64(len(body))); err != nil {
				s.inv.LimitExceeded(err)
				s.quit, s.quitRC = true, commands.StatusLimit
				return errs + 1
			}
			held = int64(len(body))
		} else {
			sql.WriteByte('\n')
			scan.feed("\n")
		}
		sql.WriteString(body)
		if scan.feed(body) {
			if !runSQL() {
				break
			}
		}
	}
	if sql.Len() > 0 && strings.TrimSpace(sql.String()) != "" && !s.quit {
		runSQL()
	}
	return errs
}

// readLine reads one line of a script, charging it to the budget as it
// is read, so a line without end cannot take the node's memory. It
// returns the line and what it charged.
func (s *state) readLine(br *bufio.Reader) (string, int64, error) {
	var b []byte
	var charged int64
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if err := s.res.Grow(int64(len(chunk))); err != nil {
				return "", charged, err
			}
			charged += int64(len(chunk))
			b = append(b, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return string(b), charged, err
	}
}

type prepareError struct {
	err     error
	context string
}

func (e *prepareError) Error() string { return e.err.Error() }
func (e *prepareError) Unwrap() error { return e.err }

type stepError struct{ err error }

func (e *stepError) Error() string { return e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// exec runs every statement of sql, printing rows in the current mode.
func (s *state) exec(sql string) error {
	if err := s.open(); err != nil {
		return err
	}
	defer s.endOnce()
	for {
		sql = strings.TrimLeft(sql, " \t\r\n\f\v")
		if sql == "" {
			return nil
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
		stmt, tail, err := s.conn.Prepare(sql)
		if err != nil {
			return &prepareError{err: err, context: errorContext(sql, err)}
		}
		if stmt == nil {
			sql = tail
			continue
		}
		err = s.print(stmt)
		stmt.Close()
		if err != nil {
			return err
		}
		sql = tail
	}
}

// errorContext is shell.c's pointer to where a statement failed to parse:
// the text around the error offset, with a caret.
func errorContext(sql string, err error) string {
	var se *sqlite3.Error
	if !errors.As(err, &se) {
		return ""
	}
	rest := se.SQL()
	if rest == "" || !strings.HasSuffix(sql, rest) {
		return ""
	}
	off := len(sql) - len(rest)
	z := sql
	for off > 50 {
		off--
		z = z[1:]
		for len(z) > 0 && z[0]&0xc0 == 0x80 {
			z = z[1:]
			off--
		}
	}
	if len(z) > 78 {
		n := 78
		for n > 0 && z[n]&0xc0 == 0x80 {
			n--
		}
		z = z[:n]
	}
	code := []byte(z)
	for i, c := range code {
		if c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v' {
			code[i] = ' '
		}
	}
	if off < 25 {
		return fmt.Sprintf("\n  %s\n  %s^--- error here", code, strings.Repeat(" ", off))
	}
	return fmt.Sprintf("\n  %s\n  %serror here ---^", code, strings.Repeat(" ", off-14))
}

// unescape reads C escapes in separators, as shell.c's resolve_backslashes.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '"', '\'', '\\':
			b.WriteByte(c)
		default:
			if c >= '0' && c <= '7' {
				j := i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(s[i:j], 8, 8)
				b.WriteByte(byte(n))
				i = j - 1
			} else {
				b.WriteByte('\\')
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}
