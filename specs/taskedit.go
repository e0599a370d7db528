package specs

import (
	"fmt"
	"regexp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Plan edits as answers: add, remove, move, dependencies, requirements,
// estimates, metadata and metadata-batch. Each runs one edit of the domain
// (authoring.go, deps.go) and reports the node after it.

// AddedTask is the node AddTaskView created.
type AddedTask struct {
	TaskID   string   `json:"task_id"`
	Parent   string   `json:"parent"`
	Type     NodeType `json:"type"`
	Title    string   `json:"title"`
	Position int      `json:"position"`
	Task     TaskNode `json:"task"`
}

// AddTaskView adds a node under parent (AddTask) and reports it with its
// 0-based position.
func AddTaskView(s *Spec, parent string, in TaskInput) (AddedTask, error) {
	id, idx, err := addTask(s, parent, in)
	if err != nil {
		return AddedTask{}, err
	}
	n := s.Node(id)
	return AddedTask{TaskID: id, Parent: parent, Type: n.Type, Title: n.Title, Position: idx, Task: NodeOf(n)}, nil
}

// RemovedTasks lists the nodes RemoveTaskView removed.
type RemovedTasks struct {
	TaskID       string   `json:"task_id"`
	Removed      []string `json:"removed"`
	RemovedCount int      `json:"removed_count"`
}

// RemoveTaskView removes id (and, with cascade, its children; RemoveTask).
func RemoveTaskView(s *Spec, id string, cascade bool) (RemovedTasks, error) {
	removed, err := RemoveTask(s, id, cascade)
	return RemovedTasks{TaskID: id, Removed: removed, RemovedCount: len(removed)}, err
}

// MovedTask is where MoveTaskView put the node.
type MovedTask struct {
	TaskID   string `json:"task_id"`
	Parent   string `json:"parent"`
	Position int    `json:"position"`
}

// MoveTaskView moves id under parent at position (MoveTask).
func MoveTaskView(s *Spec, id, parent string, position *int) (MovedTask, error) {
	if err := MoveTask(s, id, parent, position); err != nil {
		return MovedTask{}, err
	}
	return MovedTask{TaskID: id, Parent: s.Node(id).Parent, Position: Position(s, id)}, nil
}

// DependencyEdit is AddDependency or RemoveDependency.
type DependencyEdit func(s *Spec, taskID, targetID, depType string) error

// DependencyView is an edge after an edit, with both ends' dependency
// lists.
type DependencyView struct {
	TaskID             string    `json:"task_id"`
	TargetID           string    `json:"target_id"`
	DependencyType     string    `json:"dependency_type"`
	TaskDependencies   TaskDeps  `json:"task_dependencies"`
	TargetDependencies *TaskDeps `json:"target_dependencies,omitempty"`
}

// EditDependency runs do on the edge id → target of depType (default
// blocks) and reports both ends.
func EditDependency(s *Spec, do DependencyEdit, id, target, depType string) (DependencyView, error) {
	if depType == "" {
		depType = "blocks"
	}
	if err := do(s, id, target, depType); err != nil {
		return DependencyView{}, err
	}
	v := DependencyView{TaskID: id, TargetID: target, DependencyType: depType, TaskDependencies: DepsOf(s.Node(id))}
	if t := s.Node(target); t != nil {
		td := DepsOf(t)
		v.TargetDependencies = &td
	}
	return v, nil
}

// AddedRequirement is the requirement AddRequirementView appended, with
// how many the node has now.
type AddedRequirement struct {
	TaskID      string      `json:"task_id"`
	Requirement Requirement `json:"requirement"`
	Count       int         `json:"count"`
}

// AddRequirementView appends a requirement to id (AddRequirement).
func AddRequirementView(s *Spec, id, reqType, text string) (AddedRequirement, error) {
	req, err := AddRequirement(s, id, reqType, text)
	if err != nil {
		return AddedRequirement{}, err
	}
	return AddedRequirement{TaskID: id, Requirement: req, Count: len(s.Node(id).Requirements())}, nil
}

// Estimate is a node's estimate.
type Estimate struct {
	TaskID         string  `json:"task_id"`
	EstimatedHours any     `json:"estimated_hours"`
	Complexity     *string `json:"complexity"`
}

// UpdateEstimateView sets id's estimate (UpdateEstimate) and reports it.
func UpdateEstimateView(s *Spec, id string, hours *float64, complexity string) (Estimate, error) {
	if err := UpdateEstimate(s, id, hours, complexity); err != nil {
		return Estimate{}, err
	}
	n := s.Node(id)
	eh, _ := n.Meta("estimated_hours")
	return Estimate{TaskID: id, EstimatedHours: eh, Complexity: nullable(n.MetaString("complexity"))}, nil
}

// MetadataFields are update-metadata's direct parameters; each sets the
// metadata key of the same name ("title" sets the node's title).
var MetadataFields = []string{"title", "description", "file_path", "task_category", "acceptance_criteria", "complexity",
	"estimated_hours", "actual_hours", "status_note", "verification_type", "command", "expected"}

// BatchMetadataFields are metadata-batch's direct parameters (foundry-mcp's):
// each sets the metadata key of the same name on every match.
var BatchMetadataFields = []string{"description", "file_path", "estimated_hours", "category", "labels", "owners"}

// MetadataUpdate is a node after a metadata update, with the keys that
// changed.
type MetadataUpdate struct {
	TaskID  string   `json:"task_id"`
	Changed []string `json:"changed"`
	Task    TaskNode `json:"task"`
}

// UpdateMetadataView applies updates to id (UpdateMetadata).
func UpdateMetadataView(s *Spec, id string, updates map[string]any) (MetadataUpdate, error) {
	changed, err := UpdateMetadata(s, id, updates)
	if err != nil {
		return MetadataUpdate{}, err
	}
	return MetadataUpdate{TaskID: id, Changed: changed, Task: NodeOf(s.Node(id))}, nil
}

// MaxBatchMatches bounds metadata-batch: more matches is an error asking
// for narrower filters, so one call never rewrites a whole large spec.
const MaxBatchMatches = 100

// BatchFilters are metadata-batch's filters, echoed in its answer.
type BatchFilters struct {
	Status   string `json:"status"`
	Parent   string `json:"parent"`
	Pattern  string `json:"pattern"`
	NodeType string `json:"node_type"`
}

// Filter is f as a task filter over task nodes: at least one filter
// (MISSING_REQUIRED), pattern a valid RE2 expression over titles and ids
// (INVALID_REGEX_PATTERN). Parent is the scope, not part of the filter.
func (f BatchFilters) Filter() (TaskFilter, error) {
	if f == (BatchFilters{}) {
		return TaskFilter{}, core.NewError(errcode.MissingRequired, "metadata-batch needs at least one filter: status, parent, pattern or node_type.", map[string]any{"field": "pattern", "action": "metadata-batch", "filters": []string{"status", "parent", "pattern", "node_type"}})
	}
	tf := TaskFilter{TasksOnly: true, Status: f.Status, NodeType: f.NodeType}
	if f.Pattern != "" {
		re, err := regexp.Compile(f.Pattern)
		if err != nil {
			return tf, core.NewError(errcode.InvalidRegex, "pattern is not a valid RE2 regular expression.", map[string]any{"field": "pattern", "received": f.Pattern, "constraint": "RE2 syntax, at most 256 characters"})
		}
		tf.Match = func(n *Node) bool { return re.MatchString(n.Title) || re.MatchString(n.ID) }
	}
	return tf, nil
}

// MetadataBatch reports metadata-batch: every node matched, with the keys
// that changed on it.
type MetadataBatch struct {
	MatchedCount int              `json:"matched_count"`
	UpdatedCount int              `json:"updated_count"`
	Nodes        []MetadataChange `json:"nodes"`
	Updates      map[string]any   `json:"updates"`
	Filters      BatchFilters     `json:"filters"`
}

// UpdateMetadataBatch applies updates to every task node of scope's
// subtree that tf keeps (MatchTasks, UpdateMetadataAll): more than
// MaxBatchMatches matches is VALIDATION_ERROR, and any invalid update
// rejects the whole call (the caller's transaction stores nothing).
func UpdateMetadataBatch(s *Spec, scope string, f BatchFilters, tf TaskFilter, updates map[string]any) (MetadataBatch, error) {
	matched, tooMany := MatchTasks(s, scope, tf, MaxBatchMatches)
	if tooMany {
		return MetadataBatch{}, core.NewError(errcode.Validation, fmt.Sprintf("The filters match more than %d nodes; narrow them.", MaxBatchMatches), map[string]any{"field": "pattern", "limit": MaxBatchMatches, "constraint": "at most 100 matches"})
	}
	changes, err := UpdateMetadataAll(s, matched, updates)
	if err != nil {
		return MetadataBatch{}, err
	}
	b := MetadataBatch{MatchedCount: len(matched), Nodes: changes, Updates: updates, Filters: f}
	for _, c := range changes {
		if len(c.Changed) > 0 {
			b.UpdatedCount++
		}
	}
	return b, nil
}
