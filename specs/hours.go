package specs

// HoursKeys are the metadata keys RecalculateHours rolls up.
const (
	EstimatedHoursKey = "estimated_hours"
	ActualHoursKey    = "actual_hours"
)

// PhaseHours is one phase's rolled-up hours.
type PhaseHours struct {
	PhaseID  string   `json:"phase_id"`
	Title    string   `json:"title"`
	Previous *float64 `json:"previous"` // null: the phase had none
	Hours    float64  `json:"hours"`
	Tasks    int      `json:"tasks_with_hours"`
	Changed  bool     `json:"changed"`
}

// HoursReport is what RecalculateHours computed and changed.
type HoursReport struct {
	Field    string       `json:"field"`
	Total    float64      `json:"total"`
	Previous *float64     `json:"previous_total"` // the spec's metadata value before
	Phases   []PhaseHours `json:"phases"`
	Changed  int          `json:"changed"` // phases and spec whose value changed
}

// RecalculateHours sets each phase's key (EstimatedHoursKey or
// ActualHoursKey) to the sum of that key over the work leaves under it
// (tasks, subtasks and verify nodes without children; non-positive values
// count as none) and the spec's metadata key to the sum over phases, as
// foundry's recalculate-hours / recalculate-actual-hours do. Nodes whose
// value is already right are not touched. Hours are rounded to 2 decimals.
func RecalculateHours(sp *Spec, key string) HoursReport {
	rep := HoursReport{Field: key, Phases: []PhaseHours{}}
	root := sp.Root()
	if root == nil {
		return rep
	}
	for _, pid := range root.Children.All() {
		if ph := sp.Node(pid); ph != nil && ph.Type == TypePhase {
			rep.addPhase(sp, pid, ph, key)
		}
	}
	rep.Total = round2(rep.Total)
	rep.setSpecTotal(sp, key)
	return rep
}

// addPhase sets the key of phase pid (node ph) to the sum over its work
// leaves (when it differs) and lists the phase in rep.
func (rep *HoursReport) addPhase(sp *Spec, pid string, ph *Node, key string) {
	row := PhaseHours{PhaseID: pid, Title: ph.Title, Previous: metaNumber(ph.Metadata, key)}
	sumLeaves(sp, ph, key, &row)
	row.Hours = round2(row.Hours)
	if differs(row.Previous, row.Hours) {
		row.Changed = true
		rep.Changed++
		sp.Edit(pid).SetMeta(key, row.Hours)
	}
	rep.Total += row.Hours
	rep.Phases = append(rep.Phases, row)
}

// setSpecTotal sets the spec's metadata key to rep.Total when it differs.
func (rep *HoursReport) setSpecTotal(sp *Spec, key string) {
	rep.Previous = metaNumber(sp.Header.Metadata, key)
	if !differs(rep.Previous, rep.Total) {
		return
	}
	h := sp.Header.Clone()
	if h.Metadata == nil {
		h.Metadata = map[string]any{}
	}
	h.Metadata[key] = rep.Total
	sp.Header = h
	rep.Changed++
}

// metaNumber is m[key] as a number, nil when it is not one.
func metaNumber(m map[string]any, key string) *float64 {
	if v, ok := toFloat(m[key]); ok {
		return &v
	}
	return nil
}

// differs reports whether v differs from the previous value (nil: none).
func differs(previous *float64, v float64) bool { return previous == nil || *previous != v }

// sumLeaves adds key over the work leaves below n to row.
func sumLeaves(sp *Spec, n *Node, key string, row *PhaseHours) {
	for _, id := range n.Children.All() {
		c := sp.Node(id)
		switch {
		case c == nil:
		case c.IsWorkLeaf():
			if h := positiveMeta(c, key); h > 0 {
				row.Hours += h
				row.Tasks++
			}
		default:
			sumLeaves(sp, c, key, row)
		}
	}
}
