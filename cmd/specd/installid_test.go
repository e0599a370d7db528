package main

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestInstallIDReaderWaitsOnlyForTheFirstRead: the first load waits for the
// read started with the reader; once a read has failed, a load answers at
// once (its read goes on in the background, one at a time) and a later
// load finds what that read found.
func TestInstallIDReaderWaitsOnlyForTheFirstRead(t *testing.T) {
	type answer struct {
		id  string
		err error
	}
	answers := make(chan answer)
	var reads atomic.Int32
	r := newInstallIDReader(func() (string, error) { reads.Add(1); a := <-answers; return a.id, a.err })
	load := func(what string) (string, error) {
		t.Helper()
		type res struct {
			id  string
			err error
		}
		done := make(chan res, 1)
		go func() { id, err := r.Load(); done <- res{id, err} }()
		select {
		case x := <-done:
			return x.id, x.err
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: Load still waiting after 30s", what)
			return "", nil
		}
	}
	unreachable := errors.New("unreachable")
	go func() { answers <- answer{"", unreachable} }()
	if _, err := load("first load"); !errors.Is(err, unreachable) {
		t.Fatalf("first load: want the first read's failure, got %v", err)
	}
	// A second read is now in flight (nobody answers it yet): loads do not wait for it.
	for i := 0; i < 3; i++ {
		if _, err := load("load after a failure"); !errors.Is(err, unreachable) {
			t.Fatalf("load after a failure: want the last failure, got %v", err)
		}
	}
	answers <- answer{"id-1", nil} // the read in flight succeeds (only one was started)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if id, err := r.Load(); err == nil {
			if id != "id-1" {
				t.Fatalf("want id-1, got %q", id)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background read's id never reached Load")
		}
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("%d reads started; want 2 (the first, then one in the background)", n)
	}
}
