package specstore

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
)

// TestHistoryRecordEncodesAsJSONMarshal: the history record written
// without json.Marshal's re-scan of the stored nodes is byte for byte what
// json.Marshal of the record gives, for compact nodes (copied as they are)
// and for nodes compaction changes (whitespace, HTML characters, U+2028),
// absent nodes (null), and escaped ids and strings, beside a children
// patch.
func TestHistoryRecordEncodesAsJSONMarshal(t *testing.T) {
	st := storetest.Open(t)
	stored := map[string]string{
		"task-1-1":  `{"type":"task","title":"a \"quoted\" \\ title","children":[]}`,
		"phase-1":   `{"type":"phase","children":["task-1-1","task-1-2"]}`,
		"spaced":    `{ "type" : "task",` + "\n" + ` "title": "x y" }`,
		"html":      `{"title":"a <b> & c"}`,
		"separator": "{\"title\":\"line\u2028sep\"}",
		"weird\"id": `{"title":"é"}`,
	}
	ids := []string{"phase-1", "task-1-1", "spaced", "html", "separator", "weird\"id", "absent", "task-1-1"}
	rec := historyRecord{Version: 7, Timestamp: "2026-11-27T00:00:00Z", Action: "task <add>", Author: "ann & bob",
		HeaderBefore:   json.RawMessage(`{"spec_id":"s","version":6}`),
		ChildrenBefore: map[string]childrenPatch{"phase-1": {Head: 1, Mid: []string{"task-1-<0>"}, Tail: 1}}}
	err := st.Update(context.Background(), func(tx bucketstore.Tx) error {
		nodes, err := tx.Bucket(bucketSpecs).CreateBucket([]byte("nodes"))
		if err != nil {
			return err
		}
		for k, v := range stored {
			if err := nodes.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		sorted := slices.Compact(slices.Sorted(slices.Values(ids)))
		changes := make([]nodeBefore, len(sorted))
		for i, id := range sorted {
			changes[i] = nodeBefore{id: id, record: nodes.Get([]byte(id))}
			changes[i].patch, changes[i].hasPatch = rec.ChildrenBefore[id]
		}
		got, err := encodeHistoryRecord(rec, changes)
		if err != nil {
			return err
		}
		want := rec
		want.NodesBefore = map[string]json.RawMessage{}
		for _, id := range ids {
			if v := nodes.Get([]byte(id)); v != nil {
				want.NodesBefore[id] = append(json.RawMessage(nil), v...)
			} else {
				want.NodesBefore[id] = json.RawMessage("null")
			}
		}
		wantB, err := json.Marshal(want)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, wantB) {
			t.Errorf("encoded\n%s\nwant (json.Marshal)\n%s", got, wantB)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in      string
		compact bool
	}{
		{`{"a":"b c"}`, true}, {`{"a": 1}`, false}, {`{"a":"\"<"}`, false}, {`{"a":"\\"}`, true},
		{`["x\n"]`, true}, {"[\"x\"]\n", false}, {`{"a":"\u2028"}`, true},
	} {
		if got := compactJSON([]byte(c.in)); got != c.compact {
			t.Errorf("compactJSON(%q) = %v, want %v", c.in, got, c.compact)
		}
	}
}
