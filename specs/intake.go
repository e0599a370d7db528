package specs

import "context"

// Inbox is the persistence port of the intake inbox; every method is one
// transaction (specs/specstore implements it over the store port).
type Inbox interface {
	// IntakeAdd stores item as a new entry (its id and status set by the
	// store; created_at when empty). CONFLICT when the inbox is full and
	// none of its items is dismissed.
	IntakeAdd(ctx context.Context, item IntakeItem) (IntakeItem, error)
	// IntakeList pages items oldest first after the id after, those with
	// status (IntakeNew, IntakeDismissed, "all" or ""); next is "" at the
	// end.
	IntakeList(ctx context.Context, status, after string, limit int) (items []IntakeItem, next string, err error)
	// IntakeDismiss marks item id dismissed with reason at now; already
	// reports an earlier dismissal (which is kept). NOT_FOUND.
	IntakeDismiss(ctx context.Context, id, reason, now string) (item IntakeItem, already bool, err error)
}

// IntakeItem is one note in the workspace's intake inbox (authoring
// intake-add / intake-list / intake-dismiss): an idea or request captured
// before it belongs to a spec. Items are kept in the store, one workspace
// per store; a dismissed item stays listed under status "dismissed".
type IntakeItem struct {
	ID          string   `json:"intake_id"` // "intake-<seq>", in the order items were added
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Source      string   `json:"source,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Status      string   `json:"status"` // IntakeNew or IntakeDismissed
	CreatedAt   string   `json:"created_at"`
	CreatedBy   string   `json:"created_by,omitempty"`
	DismissedAt string   `json:"dismissed_at,omitempty"`
	Reason      string   `json:"dismiss_reason,omitempty"`
}

// Intake statuses.
const (
	IntakeNew       = "new"
	IntakeDismissed = "dismissed"
)

// IntakeStatuses are the values intake-list's status filter takes.
var IntakeStatuses = []string{IntakeNew, IntakeDismissed, "all"}

// MaxIntakeItems bounds the inbox: intake-add answers STORE_FULL-free
// CONFLICT beyond it, asking to dismiss or clean up first.
const MaxIntakeItems = 5000
