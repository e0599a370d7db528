package tools

// answer wraps a typed answer or its error.
func answer[T any](v T, err error) Result {
	if err != nil {
		return Fail(err)
	}
	return OK(v)
}
