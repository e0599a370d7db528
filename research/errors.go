package research

import (
	"strings"

	"github.com/specd/specd/core"
)

// The services' failures are *core.Error values (specd's one error type):
// a code of package core/errcode, one human sentence, details (field,
// constraint, received, …) and, where the registry's default does not fit,
// a remediation. The domain names no tools, so no error raised here names
// its next call: the research tool adds the call where one recovers (an
// ARCHIVE_NOT_FOUND's listing or re-read).

// messageOf is the sentence of a coded error, without its "CODE: " prefix.
func messageOf(err error) string {
	return strings.TrimPrefix(err.Error(), core.CodeOf(err)+": ")
}
