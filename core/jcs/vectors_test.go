package jcs

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The files under testdata/input and testdata/output are the test vectors of
// the RFC 8785 authors' reference implementation (Apache-2.0): each input
// must canonicalise to the bytes of the output file of the same name.
// testdata/es6numbers.txt.gz holds "hex IEEE 754 bits,expected" lines: the
// first 10,000 lines of the ES6 number test file (its static edge cases, the
// 2,000 smallest normals and SHA-256-seeded random doubles), with the
// expected text written by ECMAScript's own Number.prototype.toString
// (node 20, the authors' generator with numLines = 10000).

func TestRFC8785Files(t *testing.T) {
	ins, err := filepath.Glob("testdata/input/*.json")
	if err != nil || len(ins) < 6 {
		t.Fatalf("test vectors missing: %v %v", ins, err)
	}
	for _, in := range ins {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata/output", filepath.Base(in)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Transform(data)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: got %s (%v)\nwant %s", filepath.Base(in), got, err, want)
		}
	}
}

// es6Numbers reads "hex,expected" lines from a file, gzipped if it ends in .gz.
func es6Numbers(t testing.TB, path string) (bits []uint64, want []string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sc *bufio.Scanner
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		sc = bufio.NewScanner(zr)
	} else {
		sc = bufio.NewScanner(f)
	}
	for sc.Scan() {
		h, w, ok := strings.Cut(sc.Text(), ",")
		b, err := strconv.ParseUint(h, 16, 64)
		if !ok || err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		bits, want = append(bits, b), append(want, w)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return bits, want
}

// TestES6Numbers checks number serialisation against ECMAScript's output.
// SPECD_JCS_ES6_FILE names a larger file of the same form (such as the full
// 100 million line one) to run instead.
func TestES6Numbers(t *testing.T) {
	path := "testdata/es6numbers.txt.gz"
	if p := os.Getenv("SPECD_JCS_ES6_FILE"); p != "" {
		path = p
	}
	bits, want := es6Numbers(t, path)
	if len(bits) < 10000 {
		t.Fatalf("%d vectors, want at least 10000", len(bits))
	}
	bad := 0
	for i, b := range bits {
		if got := formatNumber(math.Float64frombits(b)); got != want[i] {
			if bad++; bad <= 10 {
				t.Errorf("%016x: got %s, want %s", b, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d numbers wrong", bad, len(bits))
	}
}

// BenchmarkTransform and BenchmarkMarshal are the figures of the package
// comment's choice; BenchmarkMarshal is the path of every caller (Hash).
func BenchmarkTransform(b *testing.B) {
	doc := []byte(`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001,12,-7.25e-9],` +
		`"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false],` +
		`"items":[{"id":"a1","title":"First item","tags":["x","y"],"n":1},{"id":"a2","title":"Second — item","tags":[],"n":2.5}],` +
		`"\ufb33":5,"\u20ac":1,"\ud83d\ude00":2,"\r":3,"1":4}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Transform(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	doc := map[string]any{
		"numbers": []any{333333333.33333329, 1e30, 4.50, 2e-3, 1e-27, 12, -7.25e-9},
		"string":  "\u20ac$\u000F\u000aA'B\"\\/<&>", "literals": []any{nil, true, false},
		"items": []map[string]any{{"id": "a1", "title": "First item", "tags": []string{"x", "y"}, "n": 1},
			{"id": "a2", "title": "Second — item", "tags": []string{}, "n": 2.5}},
		"\ufb33": 5, "\u20ac": 1, "\U0001F600": 2, "\r": 3, "1": 4,
		"raw": json.RawMessage(`{"b":1,"b":2,"s":"\ud800"}`),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNumbers(b *testing.B) {
	bits, _ := es6Numbers(b, "testdata/es6numbers.txt.gz")
	b.ReportAllocs()
	for b.Loop() {
		for _, x := range bits {
			_ = formatNumber(math.Float64frombits(x))
		}
	}
}
