package core

import "github.com/specd/specd/core/errcode"

// NoNextCall lists the codes whose failures legitimately name no next call
// (recovery.suggested_tool is null), each with the reason. Every other code
// must carry a recovery call that runs as given; the contract test
// (tests/recovery_test.go) provokes every error path it can reach and holds
// each answer to this table.
var NoNextCall = map[string]string{
	errcode.Internal:           "a server fault: the next call is the same call again, with backoff; the request_id is for the operator",
	errcode.Unavailable:        "the deadline passed or the client cancelled: the next call is the same call, narrowed (smaller limit, fewer items)",
	errcode.LockTimeout:        "another process holds the store: the next call is the same call after details.retry_after_ms",
	errcode.RateLimitExceeded:  "the next call is the same call after retry_after_seconds",
	errcode.FeatureDisabled:    "only an operator can turn the flag on; no call of this client changes that",
	errcode.Unauthorized:       "credentials come from the client's configuration, not from a tool call",
	errcode.Forbidden:          "access is granted by an operator, not by a tool call",
	errcode.StoreCorrupt:       "only an operator can mend the file: move it aside and restore a backup (specd backup, specd check); no tool call repairs it",
	errcode.StoreFull:          "the disk must be freed outside specd; the next call is the same call once it is",
	errcode.StoreReadOnly:      "reads keep working; making the file writable is an operator's step outside specd",
	errcode.GateWaiverDisabled: "only an operator enables gate waivers (--allow-gate-waiver); no call of this client changes that",
	errcode.AuditChainBroken:   "a broken audit ledger is evidence for the operator; no tool call mends it",
}
