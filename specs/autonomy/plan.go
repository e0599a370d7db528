package autonomy

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/specd/specd/specs"
)

// phasePlan is a phase as the engine walks it: its implementation leaves
// (task and subtask leaves) and its verify leaves, in execution order.
type phasePlan struct {
	ID, Title string
	Tasks     []*specs.Node
	Verifies  []*specs.Node
}

// planOf lists the spec's phases (the root's phase children, in order)
// with their work leaves.
func planOf(sp *specs.Spec) []phasePlan {
	root := sp.Root()
	if root == nil {
		return nil
	}
	var out []phasePlan
	for _, pid := range root.Children.All() {
		if p := sp.Node(pid); p != nil && p.Type == specs.TypePhase {
			out = append(out, phasePlanOf(sp, p))
		}
	}
	return out
}

// phasePlanOf is phase p's plan: its work leaves in execution order,
// verify leaves apart.
func phasePlanOf(sp *specs.Spec, p *specs.Node) phasePlan {
	pp := phasePlan{ID: p.ID, Title: p.Title}
	for n := range specs.ExecutionOrder(sp, p.ID) {
		switch {
		case n.ID == p.ID || !n.IsWorkLeaf():
		case n.Type == specs.TypeVerify:
			pp.Verifies = append(pp.Verifies, n)
		default:
			pp.Tasks = append(pp.Tasks, n)
		}
	}
	return pp
}

// structureHash is the sha256 of the spec's phase and work-leaf structure
// (ids, types and verify commands, in order): what a session was planned
// against. Status changes do not alter it; adding, removing or moving work
// does (SPEC_REBASE_REQUIRED).
func structureHash(sp *specs.Spec) string {
	var b strings.Builder
	for _, p := range planOf(sp) {
		b.WriteString("phase\x00" + p.ID + "\n")
		for _, t := range p.Tasks {
			b.WriteString("task\x00" + t.ID + "\n")
		}
		for _, v := range p.Verifies {
			b.WriteString("verify\x00" + v.ID + "\x00" + v.MetaString("command") + "\n")
		}
	}
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:])
}

func phaseOf(plan []phasePlan, id string) (phasePlan, bool) {
	for _, p := range plan {
		if p.ID == id {
			return p, true
		}
	}
	return phasePlan{}, false
}

func taskIDs(plan []phasePlan) map[string]bool {
	ids := map[string]bool{}
	for _, p := range plan {
		for _, t := range p.Tasks {
			ids[t.ID] = true
		}
		for _, v := range p.Verifies {
			ids[v.ID] = true
		}
	}
	return ids
}
