package flags

import (
	"context"
	"sync"

	isync "github.com/open-feature/flagd/core/pkg/sync"
)

// memSyncURI names the flag source inside flagd's store (never a path).
const memSyncURI = "specd://flag-file"

// memSync hands the flag file's last checked configuration to flagd's
// in-process evaluator from memory: it is the flagd sync the file mode uses
// instead of flagd's file sync over a private copy of the file. Nothing is
// written to disk, so a server killed with SIGKILL, or a caller that never
// calls Close, leaves nothing behind. Only configurations that passed
// CheckFile are set, so flagd never sees an empty or broken state.
type memSync struct {
	mu      sync.Mutex
	data    string
	changed chan struct{} // a buffered wake-up of Sync: data was set
}

// newMemSync starts a sync holding data.
func newMemSync(data []byte) *memSync {
	return &memSync{data: string(data), changed: make(chan struct{}, 1)}
}

// set replaces the configuration; Sync hands it to flagd. It never blocks.
func (m *memSync) set(data []byte) {
	m.mu.Lock()
	m.data = string(data)
	m.mu.Unlock()
	select {
	case m.changed <- struct{}{}:
	default: // a wake-up is pending; it sends the latest data
	}
}

func (m *memSync) current() isync.DataSync {
	m.mu.Lock()
	defer m.mu.Unlock()
	return isync.DataSync{FlagData: m.data, Source: memSyncURI}
}

// Init has nothing to prepare.
func (m *memSync) Init(context.Context) error { return nil }

// IsReady is always true: the configuration is in memory from the start.
func (m *memSync) IsReady() bool { return true }

// Sync sends the configuration at once, then again after every set, until
// ctx ends (the provider's shutdown).
func (m *memSync) Sync(ctx context.Context, out chan<- isync.DataSync) error {
	for {
		select {
		case out <- m.current():
		case <-ctx.Done():
			return nil
		}
		select {
		case <-m.changed:
		case <-ctx.Done():
			return nil
		}
	}
}

// ReSync sends the configuration once.
func (m *memSync) ReSync(ctx context.Context, out chan<- isync.DataSync) error {
	select {
	case out <- m.current():
	case <-ctx.Done():
	}
	return nil
}

var _ isync.ISync = (*memSync)(nil)
