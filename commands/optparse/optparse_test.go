package optparse

import (
	"errors"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	set := New("rfm:", "recursive:r", "force:f", "mode=:m", "color?", "verbose")
	tests := []struct {
		args     []string
		opts     []Opt
		operands []string
		err      string
	}{
		{[]string{"-rf", "a"}, []Opt{{"r", ""}, {"f", ""}}, []string{"a"}, ""},
		{[]string{"a", "-m", "755", "b"}, []Opt{{"m", "755"}}, []string{"a", "b"}, ""},
		{[]string{"-m755"}, []Opt{{"m", "755"}}, nil, ""},
		{[]string{"--mode=644", "--recursive"}, []Opt{{"m", "644"}, {"r", ""}}, nil, ""},
		{[]string{"--verb", "--col"}, []Opt{{"verbose", ""}, {"color", ""}}, nil, ""},
		{[]string{"--", "-r"}, nil, []string{"-r"}, ""},
		{[]string{"-x"}, nil, nil, "invalid option -- 'x'"},
		{[]string{"-m"}, nil, nil, "option requires an argument -- 'm'"},
		{[]string{"--nope"}, nil, nil, "unrecognized option '--nope'"},
		{[]string{"--force=1"}, nil, nil, "option '--force' doesn't allow an argument"},
		// getopt's texts and rules, now that there is one parser
		{[]string{"--ver"}, []Opt{{"verbose", ""}}, nil, ""},
		{[]string{"--mo"}, nil, nil, "option '--mode' requires an argument"},
		{[]string{"--co=always", "-"}, []Opt{{"color", "always"}}, []string{"-"}, ""},
	}
	for _, tt := range tests {
		opts, operands, err := set.Parse(tt.args)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q: err %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(opts, tt.opts) || !reflect.DeepEqual(operands, tt.operands) {
			t.Errorf("%q: got %v %v %v, want %v %v", tt.args, opts, operands, err, tt.opts, tt.operands)
		}
	}
}

// The ambiguity rules and text are getopt's (GNU's): aliases of one
// option are not ambiguous, different options are listed.
func TestAmbiguous(t *testing.T) {
	set := New("", "verbose", "version", "silent:q", "quiet:q")
	if _, _, err := set.Parse([]string{"--ver"}); err == nil || err.Error() != "option '--ver' is ambiguous; possibilities: '--verbose' '--version'" {
		t.Errorf("--ver: %v", err)
	}
	if opts, _, err := set.Parse([]string{"--qu"}); err != nil || len(opts) != 1 || opts[0].Key != "q" {
		t.Errorf("--qu: %v %v", opts, err)
	}
	_, _, err := set.Parse([]string{"--nope"})
	var u *UsageError
	if !errors.As(err, &u) || u.UnknownOption() != "--nope" {
		t.Errorf("--nope: %v does not name the unknown option", err)
	}
}
