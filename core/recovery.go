package core

// NoNextCall lists the codes whose failures legitimately name no next call
// (recovery.suggested_tool is null), each with the reason. Every other code
// must carry a recovery call that runs as given; the contract test
// (tests/recovery_test.go) provokes every error path it can reach and holds
// each answer to this table.
var NoNextCall = map[string]string{
	CodeInternal:          "a server fault: the next call is the same call again, with backoff; the request_id is for the operator",
	CodeUnavailable:       "the deadline passed or the client cancelled: the next call is the same call, narrowed (smaller limit, fewer items)",
	CodeLockTimeout:       "another process holds the store: the next call is the same call after details.retry_after_ms",
	CodeRateLimitExceeded: "the next call is the same call after retry_after_seconds",
	CodeFeatureDisabled:   "only an operator can turn the flag on; no call of this client changes that",
	CodeUnauthorized:      "credentials come from the client's configuration, not from a tool call",
	CodeForbidden:         "access is granted by an operator, not by a tool call",
	CodeStoreCorrupt:      "only an operator can mend the file: move it aside and restore a backup (specd backup, specd check); no tool call repairs it",
	CodeStoreFull:         "the disk must be freed outside specd; the next call is the same call once it is",
	CodeStoreReadOnly:     "reads keep working; making the file writable is an operator's step outside specd",
}
