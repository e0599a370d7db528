package bucketstore

import (
	"log/slog"
	"time"

	"github.com/specd/specd/core"
)

// EngineOptions are the options every engine takes besides its own (both
// engines' Options embed them). Zero values take the defaults
// (WithDefaults).
type EngineOptions struct {
	// Logger receives store events (default: slog.Default()).
	Logger *slog.Logger
	// Now is the clock of the store's created_at (default time.Now).
	Now func() time.Time
	// NewID generates the install id (default core.NewUUID).
	NewID func() string
}

// WithDefaults returns o with every zero field set to its default.
func (o EngineOptions) WithDefaults() EngineOptions {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = core.NewUUID
	}
	return o
}
