package textio

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 3*BufSize+17)
	for _, c := range []struct {
		in    string
		lines []string
		terms []bool
	}{
		{"", nil, nil},
		{"a\nb\n", []string{"a", "b"}, []bool{true, true}},
		{"a\n\nb", []string{"a", "", "b"}, []bool{true, true, false}},
		{long + "\nend", []string{long, "end"}, []bool{true, false}},
	} {
		br := NewReader(strings.NewReader(c.in))
		lr := LineReader{R: br, Delim: '\n'}
		var got []string
		var terms []bool
		for {
			line, term, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(line))
			terms = append(terms, term)
		}
		PutReader(br)
		if len(got) != len(c.lines) {
			t.Fatalf("%d lines, want %d", len(got), len(c.lines))
		}
		for i := range got {
			if got[i] != c.lines[i] || terms[i] != c.terms[i] {
				t.Errorf("line %d: len %d term %v, want len %d term %v", i, len(got[i]), terms[i], len(c.lines[i]), c.terms[i])
			}
		}
	}
}

func TestBudget(t *testing.T) {
	b := &Budget{Max: 10}
	if err := b.Add(10); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	err := b.Add(1)
	if !errors.Is(err, ErrMemory) || err.Error() != "warren: memory limit exceeded (0 MiB)" {
		t.Fatalf("past the limit: %v", err)
	}
	if err := (&Budget{}).Add(1 << 40); err != nil {
		t.Fatalf("unlimited budget refused: %v", err)
	}
}

func TestLineLimit(t *testing.T) {
	lr := LineReader{R: NewReader(strings.NewReader(strings.Repeat("x", 4*BufSize) + "\n")), Delim: '\n', Limit: BufSize}
	_, _, err := lr.Next()
	if !errors.Is(err, ErrMemory) {
		t.Fatalf("a line past the limit: %v", err)
	}
}
