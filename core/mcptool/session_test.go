package mcptool

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// stdioLike is a client session whose id is mcp-go's constant "stdio".
type stdioLike struct{}

func (stdioLike) Initialize()                                         {}
func (stdioLike) Initialized() bool                                   { return true }
func (stdioLike) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (stdioLike) SessionID() string                                   { return "stdio" }

// TestStdioSessionsAreTheProcessSession: mcp-go names every stdio session
// "stdio"; two processes must not share a started_by, so the per-process id
// is used instead.
func TestStdioSessionsAreTheProcessSession(t *testing.T) {
	srv := server.NewMCPServer("t", "1")
	ctx := srv.WithContext(context.Background(), stdioLike{})
	s := sessionOf(ctx, mcp.CallToolRequest{}, Runtime{ProcessSession: "proc-1"})
	if s.ID != "proc-1" {
		t.Fatalf("stdio session id %q, want the process session", s.ID)
	}
}
