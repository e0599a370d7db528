package mcptool

import (
	"encoding/json"
)

// TokensOf is the answer budget's token estimate: bytes of v's compact JSON
// / 4, rounded up; 0 when v cannot be encoded.
func TokensOf(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return (len(b) + 3) / 4
}

// nonNilStrings is s, or an empty list for nil (a JSON [] rather than
// null).
func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// StructMap is v (a result struct) as the JSON object its encoding gives;
// an empty map, never nil, when v does not encode to an object.
func StructMap(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{}
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return map[string]any{}
	}
	return m
}
