package sqlite_test

import (
	"io"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/commands"
	"github.com/warren-sandbox/warren/commands/coreutils/cmdtest"
	"github.com/warren-sandbox/warren/commands/sqlite"
)

// endless is an io.Reader of the same bytes for ever.
type endless string

func (e endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], e)
	}
	return n, nil
}

// TestHostile: scripts meant to exhaust the node end at the sandbox's
// limits, give the budget back, and keep the Go heap bounded.
func TestHostile(t *testing.T) {
	tab := commands.Table{}
	sqlite.Register(tab)
	cmdtest.RunHostile(t, tab, []cmdtest.Hostile{
		{Name: "a statement without end on stdin", Args: []string{"sqlite3", ":memory:"}, Stdin: io.LimitReader(endless("select 1 union all\n"), 256<<20),
			Budget: 16 << 20, Status: 125, Msg: "warren: memory limit exceeded (16 MiB)", MaxHeap: 512 << 20},
		{Name: "a line without end on stdin", Args: []string{"sqlite3", ":memory:"}, Stdin: io.LimitReader(endless("xxxxxxxx"), 256<<20),
			Budget: 16 << 20, Status: 125, Msg: "warren: memory limit exceeded (16 MiB)", MaxHeap: 512 << 20},
		{Name: "a value larger than SQLite's memory", Args: []string{"sqlite3", ":memory:", "select length(randomblob(50000000))"},
			Budget: 32 << 20, Status: 125, Msg: "memory limit (16 MiB) reached"},
		{Name: "column mode holds every row", Args: []string{"sqlite3", "-table", ":memory:", "select hex(randomblob(200)) from generate_series(1, 1000000)"},
			Budget: 32 << 20, Status: 125, Msg: "warren: memory limit exceeded (32 MiB)", Within: 60 * time.Second},
		{Name: "a temporary table in memory", Args: []string{"sqlite3", ":memory:", "pragma temp_store=file", "create temp table t as select randomblob(1000) from generate_series(1, 100000)"},
			Budget: 32 << 20, Status: 13, Msg: "database or disk is full", Within: 60 * time.Second},
		{Name: "an endless query is canceled", Args: []string{"sqlite3", ":memory:", "with recursive n(i) as (select 1 union all select i+1 from n) select count(*) from n"},
			Cancel: 200 * time.Millisecond, Status: 9, Msg: "interrupted"},
		{Name: ".read of itself", Args: []string{"sqlite3", ":memory:", ".read self.sql"}, Files: map[string]string{"self.sql": "select 1;\n.read self.sql\n"},
			Status: 1, Msg: "warren: nesting too deep (limit 16)"},
		{Name: "a database over the disk quota", Args: []string{"sqlite3", "q.db", "create table t(x)", "insert into t select randomblob(1000) from generate_series(1, 10000)"},
			Quota: 1 << 20, Status: 13, Msg: "database or disk is full"},
	})
}

func TestComplete(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{"select 1", false},
		{"select 1;", true},
		{"select 1; -- done", true},
		{"select 1; /* open", false},
		{"select ';'", false},
		{"select ';';", true},
		{`select "a;b";`, true},
		{"select 'it''s;';", true},
		{"select [x;y] from t;", true},
		{"create trigger tr after insert on t begin insert into u values(1);", false},
		{"create trigger tr after insert on t begin insert into u values(1); end;", true},
		{"create temp trigger tr after insert on t begin select 1; end;", true},
		{"select 1 /* ; */", false},
	} {
		if got := sqlite.Complete(tc.sql); got != tc.want {
			t.Errorf("complete(%q) = %v, want %v", tc.sql, got, tc.want)
		}
	}
}
