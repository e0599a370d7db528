package core

import "encoding/json"

// Encode encodes e as compact JSON once and returns a copy of e that
// remembers those bytes, so that the answer path can measure an answer
// (the token budget) and then send the same bytes without encoding it a
// second time ([Envelope.Marshal] returns them).
//
// An envelope returned by Encode is final: changing any of its fields
// afterwards would make the remembered bytes stale, so code that changes an
// envelope must build a new one (the builders do) and encode that.
func Encode(e Envelope) (Envelope, []byte, error) {
	e.encoded = nil
	b, err := json.Marshal(e)
	if err != nil {
		return e, nil, err
	}
	e.encoded = b
	return e, b, nil
}

// Encoded returns the bytes Encode recorded for e, or nil.
func (e Envelope) Encoded() []byte { return e.encoded }
