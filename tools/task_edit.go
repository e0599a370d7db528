package tools

import (
	"context"
	"fmt"
	"regexp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// Plan edits: add, remove, move, dependencies, requirements, estimates and
// metadata. Each is one stored mutation through a domain function.

func (d *Deps) taskAdd(ctx context.Context, r *Request) Result {
	a := r.Args
	in := specs.TaskInput{
		Type: specs.NodeType(a.String("task_type")), Title: a.String("title"), Description: a.String("description"),
		TaskCategory: a.String("task_category"), FilePath: a.String("file_path"), AcceptanceCriteria: a.Strings("acceptance_criteria"),
		Complexity: a.String("complexity"), VerificationType: a.String("verification_type"), Command: a.String("command"),
		Expected: a.String("expected"), BlockingMode: a.String("blocking_mode"), Metadata: a.Object("metadata"),
	}
	if h, ok := a.Float("estimated_hours"); ok {
		in.EstimatedHours = &h
	}
	if p, ok := a.Int("position"); ok {
		in.Position = p
	}
	parent := a.String("parent")
	return d.mutate(ctx, r, func(sp *specs.Spec, _ specs.JournalWriter) (map[string]any, error) {
		id, err := specs.AddTask(sp, parent, in)
		if err != nil {
			return nil, err
		}
		n := sp.Node(id)
		return map[string]any{"task_id": id, "parent": parent, "type": n.Type, "title": n.Title,
			"position": taskIndex(sp.Node(parent).Children, id) + 1, "task": taskFull(n)}, nil
	})
}

func (d *Deps) taskRemove(ctx context.Context, r *Request) Result {
	return d.mutate(ctx, r, func(sp *specs.Spec, _ specs.JournalWriter) (map[string]any, error) {
		removed, err := specs.RemoveTask(sp, r.Args.String("task_id"), r.Args.Bool("cascade"))
		if err != nil {
			return nil, err
		}
		return map[string]any{"task_id": r.Args.String("task_id"), "removed": removed, "removed_count": len(removed)}, nil
	})
}

func (d *Deps) taskMove(ctx context.Context, r *Request) Result {
	id := r.Args.String("task_id")
	pos, _ := r.Args.Int("position")
	return d.mutate(ctx, r, func(sp *specs.Spec, _ specs.JournalWriter) (map[string]any, error) {
		if err := specs.MoveTask(sp, id, r.Args.String("parent"), pos); err != nil {
			return nil, err
		}
		n := sp.Node(id)
		return map[string]any{"task_id": id, "parent": n.Parent, "position": taskIndex(sp.Node(n.Parent).Children, id) + 1}, nil
	})
}

// taskDependency is add-dependency / remove-dependency: both halves of the
// edge change in one transaction (the domain keeps them in sync).
func (d *Deps) taskDependency(do func(s *specs.Spec, taskID, targetID, depType string) error) Handler {
	return func(ctx context.Context, r *Request) Result {
		id, target := r.Args.String("task_id"), r.Args.String("target_id")
		depType := r.Args.String("dependency_type")
		if depType == "" {
			depType = "blocks"
		}
		return d.mutate(ctx, r, func(sp *specs.Spec, _ specs.JournalWriter) (map[string]any, error) {
			if err := do(sp, id, target, depType); err != nil {
				return nil, err
			}
			data := map[string]any{"task_id": id, "target_id": target, "dependency_type": depType,
				"task_dependencies": taskDeps(sp.Node(id))}
			if t := sp.Node(target); t != nil {
				data["target_dependencies"] = taskDeps(t)
			}
			return data, nil
		})
	}
}

func (d *Deps) taskAddRequirement(ctx context.Context, r *Request) Result {
	return d.mutate(ctx, r, func(sp *specs.Spec, _ specs.JournalWriter) (map[string]any, error) {
		id := r.Args.String("task_id")
		req, err := specs.AddRequirement(sp, id, r.Args.String("requirement_type"), r.Args.String("text"))
		if err != nil {
			return nil, err
		}
		return map[string]any{"task_id": id, "requirement": req, "count": len(sp.Node(id).Requirements())}, nil
	})
}

func (d *Deps) taskUpdateEstimate(ctx context.Context, r *Request) Result {
	var hours *float64
	if h, ok := r.Args.Float("estimated_hours"); ok {
		hours = &h
	}
	return d.mutate(ctx, r, func(sp *specs.Spec, _ specs.JournalWriter) (map[string]any, error) {
		id := r.Args.String("task_id")
		if err := specs.UpdateEstimate(sp, id, hours, r.Args.String("complexity")); err != nil {
			return nil, err
		}
		n := sp.Node(id)
		eh, _ := n.Meta("estimated_hours")
		return map[string]any{"task_id": id, "estimated_hours": eh, "complexity": taskNullable(n.MetaString("complexity"))}, nil
	})
}

// metadataFields are update-metadata's direct parameters; each sets the
// metadata key of the same name ("title" sets the node's title).
var metadataFields = []string{"title", "description", "file_path", "task_category", "acceptance_criteria", "complexity",
	"estimated_hours", "status_note", "verification_type", "command", "expected"}

func (d *Deps) taskUpdateMetadata(ctx context.Context, r *Request) Result {
	updates := map[string]any{}
	for k, v := range r.Args.Object("metadata") {
		updates[k] = v
	}
	for _, k := range metadataFields {
		if r.Args.Has(k) {
			updates[k] = r.Args[k]
		}
	}
	return d.mutate(ctx, r, func(sp *specs.Spec, _ specs.JournalWriter) (map[string]any, error) {
		id := r.Args.String("task_id")
		changed, err := specs.UpdateMetadata(sp, id, updates)
		if err != nil {
			return nil, err
		}
		return map[string]any{"task_id": id, "changed": changed, "task": taskFull(sp.Node(id))}, nil
	})
}

// maxBatchMatches bounds metadata-batch: more matches is an error asking
// for narrower filters, so one call never rewrites a whole large spec.
const maxBatchMatches = 100

// taskMetadataBatch applies the same updates to every task, subtask, verify
// and research node that passes all given filters (status; parent: the
// node's subtree; pattern: RE2 over title and id; node_type), in one
// transaction: any invalid update rejects the whole call. At least one
// filter is required; more than maxBatchMatches matches is VALIDATION_ERROR.
func (d *Deps) taskMetadataBatch(ctx context.Context, r *Request) Result {
	a := r.Args
	status, parent, pattern, nodeType := a.String("status"), a.String("parent"), a.String("pattern"), a.String("node_type")
	if status == "" && parent == "" && pattern == "" && nodeType == "" {
		return Fail(core.NewError(errcode.MissingRequired, "metadata-batch needs at least one filter: status, parent, pattern or node_type.",
			map[string]any{"field": "pattern", "action": "metadata-batch", "filters": []string{"status", "parent", "pattern", "node_type"}}))
	}
	var re *regexp.Regexp
	if pattern != "" {
		var err error
		if re, err = regexp.Compile(pattern); err != nil {
			return Fail(core.NewError(errcode.InvalidRegex, "pattern is not a valid RE2 regular expression.",
				map[string]any{"field": "pattern", "received": pattern, "constraint": "RE2 syntax, at most 256 characters"}))
		}
	}
	updates := a.Object("updates")
	if len(updates) == 0 {
		return Fail(core.NewError(errcode.MissingRequired, "updates must set at least one metadata key.",
			map[string]any{"field": "updates", "action": "metadata-batch"}))
	}
	specID := a.String("spec_id")
	return d.mutate(ctx, r, func(sp *specs.Spec, _ specs.JournalWriter) (map[string]any, error) {
		scope := specs.RootID
		if parent != "" {
			if sp.Node(parent) == nil {
				return nil, taskNodeNotFound(sp, specID, "parent", parent)
			}
			scope = parent
		}
		seq, _ := taskWalk(sp, scope, "", 0)
		var matched []string
		for n := range seq {
			if !isTaskNode(n) || (status != "" && string(n.Status) != status) || (nodeType != "" && string(n.Type) != nodeType) ||
				(re != nil && !re.MatchString(n.Title) && !re.MatchString(n.ID)) {
				continue
			}
			matched = append(matched, n.ID)
			if len(matched) > maxBatchMatches {
				return nil, core.NewError(errcode.Validation, fmt.Sprintf("The filters match more than %d nodes; narrow them.", maxBatchMatches),
					map[string]any{"field": "pattern", "limit": maxBatchMatches, "constraint": "at most 100 matches"})
			}
		}
		nodes := make([]map[string]any, 0, len(matched))
		updated := 0
		for _, id := range matched {
			changed, err := specs.UpdateMetadata(sp, id, updates)
			if err != nil {
				if de, ok := err.(*specs.Error); ok {
					de.Details = withDetail(de.Details, "failed_task_id", id)
				}
				return nil, err
			}
			if len(changed) > 0 {
				updated++
			}
			nodes = append(nodes, map[string]any{"task_id": id, "changed": changed})
		}
		return map[string]any{"matched_count": len(matched), "updated_count": updated, "nodes": nodes, "updates": updates,
			"filters": map[string]any{"status": status, "parent": parent, "pattern": pattern, "node_type": nodeType}}, nil
	})
}

// withDetail returns details (a fresh map when nil) with k set.
func withDetail(details map[string]any, k string, v any) map[string]any {
	if details == nil {
		details = map[string]any{}
	}
	details[k] = v
	return details
}
