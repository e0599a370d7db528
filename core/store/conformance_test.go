package store_test

import (
	"testing"
	"time"

	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
)

// TestConformance runs the store-port conformance suite on bbolt.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t testing.TB, now func() time.Time) storetest.Port {
		return storetest.Open(t, func(o *store.Options) {
			if now != nil {
				o.Now = now
			}
		})
	})
}
