package mcptool

import (
	"strings"
	"testing"
)

func TestListDescription(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Short one.", ""}, // maxListDescription 0: none (room for the foundry tools)
		{"Two sentences. Second.", ""},
		{strings.Repeat("x", MaxListDescription+1), ""},
	} {
		if got := listDescription(tc.in); got != tc.want {
			t.Errorf("listDescription(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
