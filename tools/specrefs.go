package tools

import (
	"strconv"

	"github.com/specd/specd/core/mcptool"
)

// versionRef is the version argument name as the domain takes it
// (specs.ResolveVersion): a number as its digits, a timestamp as given,
// "" when absent.
func versionRef(a mcptool.Args, name string) string {
	if n, ok := a.Int(name); ok {
		return strconv.Itoa(n)
	}
	return a.String(name)
}
