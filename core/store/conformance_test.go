package store_test

import (
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
)

// TestConformance runs the store port's conformance suite on bbolt.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t testing.TB) bucketstore.Store { return storetest.Open(t) })
}
