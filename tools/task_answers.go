package tools

import "github.com/specd/specd/core/mcptool"

// answer wraps a typed answer or its error.
func answer[T any](v T, err error) mcptool.Result {
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(v)
}
