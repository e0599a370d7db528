package specs

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"github.com/specd/specd/core"
)

// This file writes nodes and headers as encoding/json's Marshal writes
// them, byte for byte, without its reflection: every write encodes a few
// nodes and its header, and reflection over metadata maps allocates per
// entry. Strings are core.AppendJSONString's (byte for byte encoding/json's);
// values it does not know are handed to encoding/json, so its output stays
// the reference.

// appendJSON appends v as json.Marshal(v) writes it (HTML-safe strings,
// map keys sorted, floats in its format). It fails where json.Marshal
// fails (a non-finite number, a value it cannot encode).
func appendJSON(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case map[string]any:
		if t != nil {
			return appendJSONObject(b, t, "")
		}
	case []any:
		if t != nil {
			return appendJSONArray(b, t)
		}
	case []string:
		if t != nil {
			return AppendJSONStrings(b, t), nil
		}
	default:
		if out, ok := appendJSONScalar(b, v); ok {
			return out, nil
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return append(b, raw...), nil
	}
	return append(b, "null"...), nil // a nil map or list
}

// appendJSONScalar appends a nil, string, bool, finite float64, int or
// int64 v; false for any other v.
func appendJSONScalar(b []byte, v any) ([]byte, bool) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return core.AppendJSONString(b, t), true
	case bool:
		return strconv.AppendBool(b, t), true
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return b, false // encoding/json's error
		}
		return appendJSONFloat(b, t), true
	case int:
		return strconv.AppendInt(b, int64(t), 10), true
	case int64:
		return strconv.AppendInt(b, t, 10), true
	}
	return b, false
}

// appendJSONArray appends list as a JSON array.
func appendJSONArray(b []byte, list []any) ([]byte, error) {
	b = append(b, '[')
	for i, x := range list {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSON(b, x); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendJSONObject appends m as a JSON object with its keys sorted, leaving
// out the key skip (none when ""); a nil m is {} here (callers write null
// themselves where encoding/json would).
func appendJSONObject(b []byte, m map[string]any, skip string) ([]byte, error) {
	var arr [16]string
	keys := arr[:0]
	for k := range m {
		if k != skip || skip == "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = core.AppendJSONString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// AppendJSONStrings appends list as json.Marshal encodes it, byte for
// byte, except that nil is written [] (not null).
func AppendJSONStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = core.AppendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONFloat appends a finite f as encoding/json writes a float64:
// like ES6, %f for 1e-6 <= |f| < 1e21 (and 0), else %e with a
// one-digit exponent kept short (e-7, not e-07).
func appendJSONFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// EncodeHeader returns json.Marshal(h), byte for byte, at less cost: what
// the store keeps under a spec's header key and compares before and after
// a write.
func EncodeHeader(h Header) ([]byte, error) {
	if len(h.Extra) > 0 {
		return json.Marshal(h) // raw values are compacted and escaped: encoding/json's work
	}
	b := make([]byte, 0, 512)
	b = append(b, `{"spec_id":`...)
	b = core.AppendJSONString(b, h.SpecID)
	b = append(b, `,"title":`...)
	b = core.AppendJSONString(b, h.Title)
	b = append(b, `,"generated":`...)
	b = core.AppendJSONString(b, h.Generated)
	b = append(b, `,"last_updated":`...)
	b = core.AppendJSONString(b, h.LastUpdated)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, h.Version, 10)
	if h.Lifecycle != "" {
		b = append(b, `,"lifecycle":`...)
		b = core.AppendJSONString(b, string(h.Lifecycle))
	}
	b = append(b, `,"metadata":`...)
	var err error
	if b, err = appendJSON(b, h.Metadata); err != nil {
		return nil, err
	}
	b = append(b, `,"status":`...)
	b = core.AppendJSONString(b, string(h.Status))
	b = append(b, `,"progress_percentage":`...)
	b = strconv.AppendInt(b, int64(h.ProgressPercentage), 10)
	if h.CurrentPhase != "" {
		b = append(b, `,"current_phase":`...)
		b = core.AppendJSONString(b, h.CurrentPhase)
	}
	b = append(b, `,"total_tasks":`...)
	b = strconv.AppendInt(b, int64(h.TotalTasks), 10)
	b = append(b, `,"completed_tasks":`...)
	b = strconv.AppendInt(b, int64(h.CompletedTasks), 10)
	return append(b, '}'), nil
}
