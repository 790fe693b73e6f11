package getopt

import (
	"reflect"
	"testing"
)

var spec = Spec{Short: "nk:o::v", Long: []Long{
	{Name: "numeric", Key: "n"}, {Name: "key", Arg: Required, Key: "k"}, {Name: "output", Arg: Optional, Key: "o"},
	{Name: "verbose", Key: "v"}, {Name: "version"},
}}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args     []string
		opts     []string // Key=Arg
		operands []string
		err      string
	}{
		{args: []string{"-nv", "f"}, opts: []string{"n=", "v="}, operands: []string{"f"}},
		{args: []string{"f", "-k2", "g"}, opts: []string{"k=2"}, operands: []string{"f", "g"}},
		{args: []string{"-k", "2,3", "--", "-n"}, opts: []string{"k=2,3"}, operands: []string{"-n"}},
		{args: []string{"--key=1", "--num"}, opts: []string{"k=1", "n="}},
		{args: []string{"-o", "x"}, opts: []string{"o="}, operands: []string{"x"}},
		{args: []string{"-ox", "--output=y"}, opts: []string{"o=x", "o=y"}},
		{args: []string{"-"}, operands: []string{"-"}},
		{args: []string{"-Z"}, err: "invalid option -- 'Z'"},
		{args: []string{"-k"}, err: "option requires an argument -- 'k'"},
		{args: []string{"--key"}, err: "option '--key' requires an argument"},
		{args: []string{"--numeric=3"}, err: "option '--numeric' doesn't allow an argument"},
		{args: []string{"--nope"}, err: "unrecognized option '--nope'"},
		{args: []string{"--ver"}, err: "option '--ver' is ambiguous; possibilities: '--verbose' '--version'"},
	} {
		opts, operands, err := spec.Parse(c.args)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		var got []string
		for _, o := range opts {
			got = append(got, o.Key+"="+o.Arg)
		}
		if !reflect.DeepEqual(got, c.opts) || !reflect.DeepEqual(operands, c.operands) {
			t.Errorf("%q: opts %q operands %q, want %q %q", c.args, got, operands, c.opts, c.operands)
		}
	}
}

func TestInOrder(t *testing.T) {
	s := Spec{Short: "n", InOrder: true}
	opts, operands, err := s.Parse([]string{"-n", "x", "-n"})
	if err != nil || len(opts) != 1 || !reflect.DeepEqual(operands, []string{"x", "-n"}) {
		t.Fatalf("opts %v operands %q err %v", opts, operands, err)
	}
}
