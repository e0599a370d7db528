package mcptool

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Resource templates, prompts and completions answer outside the envelope:
// their failures are JSON-RPC errors, their arguments arrive untyped. These
// helpers are the plumbing every resource, prompt and completion handler
// shares; what a URI or a prompt means is the caller's.

// MaxCompletionValues is the protocol's maximum of completion values.
const MaxCompletionValues = 100

// TemplateArg is the value of a resource template's variable name in req
// (the first when the template matched several), "" when absent.
func TemplateArg(req mcp.ReadResourceRequest, name string) string {
	switch v := req.Params.Arguments[name].(type) {
	case string:
		return v
	case []string:
		if len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// ResourceError renders err for a resource read: a code among notFound
// becomes the protocol's resource-not-found error (server.ErrResourceNotFound
// wrapped with the message), INTERNAL_ERROR says nothing more, any other
// coded error reads "CODE: message".
func ResourceError(err error, notFound ...string) error {
	e := core.AsError(err)
	for _, c := range notFound {
		if e.Code == c {
			return fmt.Errorf("%w: %s", server.ErrResourceNotFound, e.Message)
		}
	}
	if e.Code == errcode.Internal {
		return fmt.Errorf("internal error reading the resource")
	}
	return fmt.Errorf("%s: %s", e.Code, e.Message)
}

// PromptError renders err for a prompt: "CODE: message (remediation)";
// INTERNAL_ERROR reads "internal error reading <what>" and nothing more.
func PromptError(err error, what string) error {
	e := core.AsError(err)
	if e.Code == errcode.Internal {
		return fmt.Errorf("internal error reading %s", what)
	}
	msg := e.Code + ": " + e.Message
	if e.Remediation != "" {
		msg += " (" + e.Remediation + ")"
	}
	return fmt.Errorf("%s", msg)
}

// Completion keeps the first MaxCompletionValues values, in the order
// given, and says how many there were; Values is never nil.
func Completion(values []string) *mcp.Completion {
	if values == nil {
		values = []string{}
	}
	total := len(values)
	if total > MaxCompletionValues {
		values = values[:MaxCompletionValues]
	}
	return &mcp.Completion{Values: values, Total: total, HasMore: total > len(values)}
}

// CompleteByPrefix completes q among values, case-insensitively: those
// starting with q first, then those containing it, each group sorted, cut
// to MaxCompletionValues (Completion).
func CompleteByPrefix(values []string, q string) *mcp.Completion {
	q = strings.ToLower(q)
	var prefix, contains []string
	for _, v := range values {
		switch l := strings.ToLower(v); {
		case strings.HasPrefix(l, q):
			prefix = append(prefix, v)
		case strings.Contains(l, q):
			contains = append(contains, v)
		}
	}
	sort.Strings(prefix)
	sort.Strings(contains)
	return Completion(append(prefix, contains...))
}
