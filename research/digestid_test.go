package research

import "testing"

func TestDigestIDs(t *testing.T) {
	for _, tc := range []struct {
		id, source, hash string
		ok               bool
	}{
		{"src#0123abcd", "src", "0123abcd", true},
		{"https://x.org/a#frag#deadbeef", "https://x.org/a#frag", "deadbeef", true},
		{DigestID("a b", "ffffffff"), "a b", "ffffffff", true},
		{"#0123abcd", "", "", false},
		{"src#0123ABCD", "", "", false},
		{"src#0123abc", "", "", false},
		{"src", "", "", false},
	} {
		s, h, ok := ParseDigestID(tc.id)
		if ok != tc.ok || s != tc.source || h != tc.hash {
			t.Errorf("%q: got %q %q %v", tc.id, s, h, ok)
		}
	}
}

func TestPayloadSourceHash(t *testing.T) {
	good := "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		v  any
		ok bool
	}{
		{good, true}, {good[:len(good)-1], false}, {good + "0", false}, {"sha256:" + "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", false},
		{"md5:" + good[7:], false}, {5, false}, {nil, false},
	} {
		h, ok := PayloadSourceHash(map[string]any{"source_text_hash": tc.v})
		if ok != tc.ok || ok && h != tc.v {
			t.Errorf("%v: %q %v", tc.v, h, ok)
		}
	}
}

// TestArchiveKeyIsSourceTextHash: a digest's source_text_hash is the
// archive key of its canonical source, so the archived source is found by
// it.
func TestArchiveKeyIsSourceTextHash(t *testing.T) {
	for _, s := range []string{"", "the canonical text", "é 東 😀"} {
		if ArchiveKey([]byte(s)) != SourceTextHash(s) {
			t.Errorf("%q: %s != %s", s, ArchiveKey([]byte(s)), SourceTextHash(s))
		}
	}
}
