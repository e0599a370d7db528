package main

import (
	"reflect"
	"testing"
)

// TestSplitPersonArgs pins how the person commands take their positional
// arguments and their own flags out of the command line, leaving the
// settings' flags for parseConfig.
func TestSplitPersonArgs(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		paged bool
		want  personArgs
		err   string
	}{
		{name: "positionals then settings", args: []string{"a", "b", "--db", "x", "json"},
			want: personArgs{pos: []string{"a", "b"}, rest: []string{"--db", "x", "json"}}},
		{name: "json alone", args: []string{"id", "--json"}, want: personArgs{pos: []string{"id"}, json: true}},
		{name: "json single dash", args: []string{"-json"}, want: personArgs{json: true}},
		{name: "json false", args: []string{"--json=false"}, want: personArgs{}},
		{name: "json not a boolean", args: []string{"--json=maybe"},
			err: `--json="maybe": not a boolean (use true/false, 1/0, yes/no or on/off)`},
		{name: "paged flags", args: []string{"--limit", "5", "--cursor=c"}, paged: true, want: personArgs{limit: 5, cursor: "c"}},
		{name: "many dashes", args: []string{"---limit=3"}, paged: true, want: personArgs{limit: 3}},
		{name: "cursor takes the next argument as it is", args: []string{"--cursor", "--json"}, paged: true, want: personArgs{cursor: "--json"}},
		{name: "limit without a value", args: []string{"--limit"}, paged: true, err: "--limit needs a value"},
		{name: "limit out of range", args: []string{"--limit=0"}, paged: true, err: `--limit="0": must be a whole number between 1 and 1000`},
		{name: "limit not a number", args: []string{"--limit", "x"}, paged: true, err: `--limit="x": must be a whole number between 1 and 1000`},
		{name: "paging flags of an unpaged command are settings", args: []string{"id", "--limit", "5"},
			want: personArgs{pos: []string{"id"}, rest: []string{"--limit", "5"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splitPersonArgs(tt.args, tt.paged)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.pos) == 0 {
				got.pos = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
