package specstore

import "testing"

// TestRecordsBucketName: a record space's bucket name is records_<space>,
// and looking a known space up again allocates nothing (every guarded
// write looks up the autonomy space).
func TestRecordsBucketName(t *testing.T) {
	if got := string(recordsBucket("autonomy")); got != "records_autonomy" {
		t.Fatalf("recordsBucket(autonomy) = %q", got)
	}
	if got := string(recordsBucket("other")); got != "records_other" {
		t.Fatalf("recordsBucket(other) = %q", got)
	}
	space := string([]byte("autonomy")) // not the constant's string
	if n := testing.AllocsPerRun(100, func() { _ = recordsBucket(space) }); n != 0 {
		t.Errorf("recordsBucket allocates %v times per lookup", n)
	}
}
