package mcptool_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
)

func TestCompleteByPrefix(t *testing.T) {
	many := make([]string, 130)
	for i := range many {
		many[i] = fmt.Sprintf("id-%03d", i)
	}
	tests := []struct {
		name      string
		values    []string
		q         string
		want      []string
		total     int
		truncated bool
	}{
		{"prefix before substring, each sorted", []string{"x-auth", "auth-b", "Auth-a", "none"}, "auth", []string{"Auth-a", "auth-b", "x-auth"}, 3, false},
		{"no match is an empty list, not null", []string{"a"}, "z", []string{}, 0, false},
		{"cut to the protocol maximum", many, "id-", many[:100], 130, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mcptool.CompleteByPrefix(tt.values, tt.q)
			if !reflect.DeepEqual(c.Values, tt.want) || c.Total != tt.total || c.HasMore != tt.truncated {
				t.Fatalf("got %v total %d more %v", c.Values, c.Total, c.HasMore)
			}
		})
	}
}

func TestResourceAndPromptErrors(t *testing.T) {
	notFound := core.NewError(errcode.SpecNotFound, "no spec x", nil)
	internal := core.NewError(errcode.Internal, "disk path /secret", nil)
	other := core.NewError(errcode.InvalidFormat, "bad id", nil).WithRemediation("use spec list")
	tests := []struct {
		name string
		got  error
		want string
		is   error
	}{
		{"not found is the protocol's", mcptool.ResourceError(notFound, errcode.SpecNotFound), server.ErrResourceNotFound.Error() + ": no spec x", server.ErrResourceNotFound},
		{"not-found code not listed", mcptool.ResourceError(notFound), "SPEC_NOT_FOUND: no spec x", nil},
		{"internal says nothing", mcptool.ResourceError(internal, errcode.SpecNotFound), "internal error reading the resource", nil},
		{"prompt with remediation", mcptool.PromptError(other, "the spec"), "INVALID_FORMAT: bad id (use spec list)", nil},
		{"prompt internal", mcptool.PromptError(internal, "the spec"), "internal error reading the spec", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got.Error() != tt.want || (tt.is != nil && !errors.Is(tt.got, tt.is)) {
				t.Fatalf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}
