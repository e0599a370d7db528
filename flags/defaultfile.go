package flags

import _ "embed"

// DefaultFile is the embedded default flag file (flagd's JSON format): every
// registry flag with its default. specd init writes it to
// <workspace>/.specd/flags.json for editing.
//
//go:embed default.json
var DefaultFile []byte
