package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// answerFile is an answer specd serve --transport http sent (testdata/answers,
// captured with curl from a server of main; the tools/call ones answer
// request id 4).
func answerFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "answers", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The scanner reads real answers, as JSON and framed as an event stream,
// as the encoding/json reading it replaced did: the acknowledged id of a
// success, the envelope's error of a refusal, the JSON-RPC error.
func TestAddAnswerRealBytes(t *testing.T) {
	for _, tc := range []struct {
		file    string
		wantID  string
		wantErr string
		wantRPC int
	}{
		{file: "add-ok.json", wantID: "task-1-1"},
		{file: "add-refused.json", wantErr: `task add: No spec "nope".`},
		{file: "add-invalid.json", wantErr: `task add: task action "add" needs "title".`},
		{file: "rpc-error.json", wantErr: "JSON-RPC error -32602: tool 'nosuch' not found: tool not found", wantRPC: -32602},
		{file: "initialize.json", wantErr: "the response to request 4"}, // id 1
	} {
		body := answerFile(t, tc.file)
		for _, framed := range []struct{ contentType, body string }{
			{"application/json", body},
			{"text/event-stream", sse(progress, strings.TrimSpace(body))},
		} {
			t.Run(tc.file+" "+framed.contentType, func(t *testing.T) {
				var a addAnswer
				err := readReply(framed.contentType, []byte(framed.body), 4, &a)
				var rpc *rpcError
				if errors.As(err, &rpc) != (tc.wantRPC != 0) || rpc != nil && rpc.Code != tc.wantRPC {
					t.Fatalf("error %v, want JSON-RPC code %d", err, tc.wantRPC)
				}
				checkAddAnswer(t, &a, err, tc.wantErr, tc.wantID)
			})
		}
	}
}

// checkAddAnswer holds a read task-add answer (err is readReply's) to
// wantErr (a part of the error, "" for none) and, when it reads, to the
// task id wantID.
func checkAddAnswer(t *testing.T, a *addAnswer, err error, wantErr, wantID string) {
	t.Helper()
	id := ""
	if err == nil {
		id, err = a.id("task", "add")
	}
	if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
		t.Fatalf("error %v, want one with %q", err, wantErr)
	}
	if id != wantID {
		t.Fatalf("task id %q, want %q", id, wantID)
	}
}

// Malformed messages and members of the wrong type are errors, as they
// were with encoding/json; the members the driver does not read may hold
// anything valid.
func TestAddAnswerMalformed(t *testing.T) {
	ok := answerFile(t, "add-ok.json")
	for _, tc := range []struct {
		name, msg string
		wantErr   string // "" when the message reads, then its task id is wantID
		wantID    string
	}{
		{name: "cut short", msg: ok[:len(ok)/2], wantErr: "failed to decode"},
		{name: "cut inside a string", msg: `{"id":4,"result":{"structuredContent":{"success":true,"data":{"task_id":"tas`, wantErr: "failed to decode"},
		{name: "trailing garbage", msg: strings.TrimSpace(ok) + "x", wantErr: "failed to decode"},
		{name: "two messages", msg: ok + ok, wantErr: "failed to decode"},
		{name: "control character in a skipped string", msg: strings.Replace(ok, "load task 0", "load\ttask 0", 1), wantErr: "failed to decode"},
		{name: "bad escape in a skipped string", msg: strings.Replace(ok, `\"success\"`, `\q`, 1), wantErr: "failed to decode"},
		{name: "bad unicode escape", msg: strings.Replace(ok, `"type":"text"`, `"type":"\u00zz"`, 1), wantErr: "failed to decode"},
		{name: "bad number in a skipped member", msg: strings.Replace(ok, `"version":3`, `"version":03`, 1), wantErr: "failed to decode"},
		{name: "bad literal in a skipped member", msg: strings.Replace(ok, `"error":null`, `"error":nul`, 1), wantErr: "failed to decode"},
		{name: "missing comma", msg: `{"id":4 "result":{}}`, wantErr: "failed to decode"},
		{name: "trailing comma", msg: `{"id":4,"result":{},}`, wantErr: "failed to decode"},
		{name: "not an object", msg: `[4]`, wantErr: "failed to decode"},
		{name: "success a string", msg: `{"id":4,"result":{"structuredContent":{"success":"true","data":{"task_id":"t"}}}}`, wantErr: "failed to decode"},
		{name: "task id a number", msg: `{"id":4,"result":{"structuredContent":{"success":true,"data":{"task_id":7}}}}`, wantErr: "failed to decode"},
		{name: "data an array", msg: `{"id":4,"result":{"structuredContent":{"success":true,"data":[]}}}`, wantErr: "failed to decode"},
		{name: "method a number", msg: `{"id":4,"method":1}`, wantErr: "failed to decode"},
		{name: "error code not an integer", msg: `{"id":4,"error":{"code":1.5,"message":"x"}}`, wantErr: "failed to decode"},
		{name: "error a string", msg: `{"id":4,"error":"x"}`, wantErr: "failed to decode"},
		{name: "empty", msg: ``, wantErr: "failed to decode"},
		{name: "null", msg: `null`, wantErr: "not the response"},
		{name: "no result", msg: `{"jsonrpc":"2.0","id":4}`, wantErr: "task add: <nil>"},
		{name: "success false without an error", msg: `{"id":4,"result":{"structuredContent":{"success":false}}}`, wantErr: "task add: <nil>"},
		{name: "an error object", msg: `{"id":4,"result":{"structuredContent":{"success":false,"error":{"a":[1,2]}}}}`, wantErr: `task add: {"a":[1,2]}`},
		{name: "structured content null", msg: `{"id":4,"result":{"structuredContent":null}}`, wantErr: "task add: <nil>"},
		{name: "task id null", msg: `{"id":4,"result":{"structuredContent":{"success":true,"data":{"task_id":null}}}}`, wantErr: "no task_id"},
		{name: "task id empty", msg: `{"id":4,"result":{"structuredContent":{"success":true,"data":{"task_id":""}}}}`, wantErr: "no task_id"},
		{name: "id as a string", msg: strings.Replace(ok, `"id":4`, `"id":"4"`, 1), wantErr: "not the response"},
		{name: "id 4.0", msg: strings.Replace(ok, `"id":4`, `"id":4.0`, 1), wantErr: "not the response"},
		{name: "keys match exactly", msg: `{"id":4,"result":{"structuredContent":{"Success":true,"data":{"task_id":"t"}}}}`, wantErr: "task add: <nil>"},
		{name: "escaped keys and values", msg: `{"\u0069d":4,"result":{"structuredContent":{"success":true,"data":{"task\u005fid":"t\"1"}}}}`, wantID: `t"1`},
		{name: "white space everywhere", msg: " {\n\"id\" : 4 ,\t\"result\" : { \"structuredContent\" : { \"success\" : true , \"data\" : { \"task_id\" : \"t\" } } } }\r\n", wantID: "t"},
		{name: "members in any order, nested skipped values", msg: `{"result":{"structuredContent":{"data":{"x":[{"task_id":"no"}],"task_id":"t"},"meta":{"a":[1,-2.5e+3,true,false,null,""]},"success":true}},"jsonrpc":"2.0","id":4}`, wantID: "t"},
		{name: "the last duplicate counts", msg: `{"id":3,"id":4,"result":{"structuredContent":{"success":false,"success":true,"data":{"task_id":"a","task_id":"b"}}}}`, wantID: "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a addAnswer
			err := readReply("application/json", []byte(tc.msg), 4, &a)
			checkAddAnswer(t, &a, err, tc.wantErr, tc.wantID)
		})
	}
}

// The scanner allocates nothing for a successful answer beyond the task
// id it keeps.
func TestAddAnswerAllocs(t *testing.T) {
	body, want := []byte(answerFile(t, "add-ok.json")), []byte("4")
	n := testing.AllocsPerRun(100, func() {
		var a addAnswer
		if found, err := a.readResponse(body, want); !found || err != nil || a.taskID != "task-1-1" {
			t.Fatal(found, err, a.taskID)
		}
	})
	if n > 1 {
		t.Fatalf("%v allocations per answer, want at most 1 (the task id)", n)
	}
}

// refAnswer is how the raw driver read an answer before the scanner (with
// encoding/json), for FuzzAddAnswer to compare against.
type refAnswer struct {
	StructuredContent struct {
		Success bool `json:"success"`
		Error   any  `json:"error"`
		Data    struct {
			TaskID string `json:"task_id"`
		} `json:"data"`
	} `json:"structuredContent"`
}

// refReadResponse is the reading the scanner replaced: found, the result
// and the error of msg read as the response to want.
func refReadResponse(msg, want []byte) (bool, *refAnswer, error) {
	res := &refAnswer{}
	found, err := jsonResult{res}.readResponse(msg, want)
	return found, res, err
}

// readKeys are the keys the driver reads; encoding/json also matches them
// case-insensitively, the scanner exactly.
var readKeys = []string{"id", "method", "error", "result", "structuredContent", "success", "data", "task_id", "code", "message"}

// comparable tells whether encoding/json and the scanner must read msg the
// same: it has no duplicate key in an object and no key that differs only
// in case from one the driver reads (where they differ by design).
func comparable(msg []byte) bool {
	d := json.NewDecoder(bytes.NewReader(msg))
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := d.Token()
		if err != nil {
			return true // invalid JSON or the end: both refuse or both read
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			k, _ := tok.(string)
			if top.keys[k] {
				return false
			}
			top.keys[k] = true
			for _, r := range readKeys {
				if strings.EqualFold(k, r) && k != r {
					return false
				}
			}
			top.key = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].obj {
			stack[len(stack)-1].key = true // a value ended
		}
	}
}

// FuzzAddAnswer checks the scanner against encoding/json on any message:
// the same messages are refused, the same are the response to request 4,
// and those read the same (success, task id, the envelope's error text,
// the JSON-RPC error). Seeds: the real answers of testdata/answers and
// testdata/fuzz/FuzzAddAnswer.
func FuzzAddAnswer(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "answers", "*.json"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	want := []byte("4")
	f.Fuzz(func(t *testing.T, msg []byte) {
		var a addAnswer
		found, err := a.readResponse(msg, want)
		if !comparable(msg) {
			return // still must not panic
		}
		rfound, ref, rerr := refReadResponse(msg, want)
		if (err == nil) != (rerr == nil) || found != rfound {
			t.Fatalf("scanner: found %v, %v; encoding/json: found %v, %v", found, err, rfound, rerr)
		}
		var rpc, rrpc *rpcError
		if errors.As(err, &rpc) != errors.As(rerr, &rrpc) || rpc != nil && *rpc != *rrpc {
			t.Fatalf("JSON-RPC error %v, encoding/json %v", err, rerr)
		}
		if err != nil || !found {
			return
		}
		env := &ref.StructuredContent
		if a.success != env.Success || a.taskID != env.Data.TaskID {
			t.Fatalf("scanner: success %v, task id %q; encoding/json: %v, %q", a.success, a.taskID, env.Success, env.Data.TaskID)
		}
		switch e := env.Error.(type) {
		case string, nil:
			if got := fmt.Sprint(e); a.errText != got {
				t.Fatalf("error text %q, encoding/json %q", a.errText, got)
			}
		default:
			if !json.Valid([]byte(a.errText)) {
				t.Fatalf("error text %q is not the JSON of %v", a.errText, e)
			}
		}
	})
}

// FuzzAddAnswerStream checks the reading of an event stream (sseMessages
// and the scanner) against sseMessages with encoding/json: the same streams
// are refused, and those read give the same task id or error.
func FuzzAddAnswerStream(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "answers", "*.json"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(sse(progress, strings.TrimSpace(string(b)))))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		var a addAnswer
		err := readReply("text/event-stream", stream, 4, &a)
		for data := range sseMessages(stream) {
			if !comparable(data) {
				return
			}
		}
		ref := &refAnswer{}
		rerr := readReply("text/event-stream", stream, 4, jsonResult{ref})
		if (err == nil) != (rerr == nil) {
			t.Fatalf("scanner: %v; encoding/json: %v", err, rerr)
		}
		if err == nil && (a.success != ref.StructuredContent.Success || a.taskID != ref.StructuredContent.Data.TaskID) {
			t.Fatalf("scanner: %v %q; encoding/json: %v %q", a.success, a.taskID, ref.StructuredContent.Success, ref.StructuredContent.Data.TaskID)
		}
	})
}
