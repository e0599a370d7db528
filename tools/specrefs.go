package tools

import (
	"strconv"

	"github.com/specd/specd/core/mcptool"
)

// versionRef is the version argument name as the domain takes it
// (versionText).
func versionRef(a mcptool.Args, name string) string { return versionText(a[name]) }

// versionText is a validated integer|string version argument as the domain
// takes it (specs.ResolveVersion): a number as its digits, a timestamp as
// given, "" when absent (or a number int cannot hold).
func versionText(v any) string {
	if n, ok := (mcptool.Args{"v": v}).Int("v"); ok {
		return strconv.Itoa(n)
	}
	s, _ := v.(string)
	return s
}
