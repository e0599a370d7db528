package jcs

import "testing"

func TestTransform(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":2,"a":1}`, `{"a":1,"b":2}`},
		{` [ 1 , 2.50, -0, 1e21, 1e-7, 0.000001, 123456789012345680000 ] `, `[1,2.5,0,1e+21,1e-7,0.000001,123456789012345680000]`},
		{`{"a":"<&>\u00e9\n\u0001"}`, "{\"a\":\"<&>é\\n\\u0001\"}"},
		// RFC 8785 §3.2.3: UTF-16 order puts U+1F600 (a surrogate pair) before U+FB33.
		{`{"\ufb33":5,"\u20ac":1,"\ud83d\ude00":2,"\r":3,"1":4}`, "{\"\\r\":3,\"1\":4,\"€\":1,\"😀\":2,\"דּ\":5}"},
		{`{"nested":{"z":[true,false,null],"y":{}}}`, `{"nested":{"y":{},"z":[true,false,null]}}`},
	}
	for _, tt := range tests {
		got, err := Transform([]byte(tt.in))
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if string(got) != tt.want {
			t.Errorf("Transform(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
	if _, err := Transform([]byte(`{"a":1} x`)); err == nil {
		t.Error("trailing data accepted")
	}
}

func FuzzTransformIdempotent(f *testing.F) {
	f.Add(`{"b":[1,2.5,"x"],"a":{"c":null}}`)
	f.Add(`"\u00e9"`)
	f.Fuzz(func(t *testing.T, s string) {
		once, err := Transform([]byte(s))
		if err != nil {
			return
		}
		twice, err := Transform(once)
		if err != nil || string(twice) != string(once) {
			t.Fatalf("not idempotent: %q → %q → %q (%v)", s, once, twice, err)
		}
	})
}
