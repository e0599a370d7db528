package tools

import "github.com/specd/specd/specs"

// The task tool's typed arguments, one struct per action (mcptool.Typed):
// the arg tags are the published parameter names and Registry.Add checks
// each struct against the action's declaration in task.go.

// taskIDArg names the node a task action works on.
type taskIDArg struct {
	TaskID string `arg:"task_id,required"`
}

// pageArgs are a listing's cursor and page size (nil: not given);
// mcptool.OpenPage reads them.
type pageArgs struct {
	Cursor *string `arg:"cursor"`
	Limit  *int    `arg:"limit"`
}

// paged reports whether the call asked for pages (gave cursor or limit).
func (p pageArgs) paged() bool { return p.Cursor != nil || p.Limit != nil }

type (
	taskNextArgs struct {
		lockedWriteArgs
		Claim bool `arg:"claim"`
	}
	taskPrepareArgs struct {
		specArgs
		TaskID string `arg:"task_id"`
	}
	taskNodeArgs struct {
		specArgs
		taskIDArg
	}
	taskStartArgs struct {
		lockedWriteArgs
		taskIDArg
		Force bool   `arg:"force"`
		Note  string `arg:"note"`
	}
	taskCompleteArgs struct {
		lockedWriteArgs
		taskIDArg
		CompletionNote string   `arg:"completion_note"`
		Note           string   `arg:"note"`
		Force          bool     `arg:"force"`
		ActualHours    *float64 `arg:"actual_hours"`
	}
	taskReopenArgs struct {
		lockedWriteArgs
		taskIDArg
		Reason string `arg:"reason,required"`
		Force  bool   `arg:"force"`
	}
	taskUpdateStatusArgs struct {
		lockedWriteArgs
		taskIDArg
		Status         string `arg:"status,required"`
		Reason         string `arg:"reason"`
		Note           string `arg:"note"`
		CompletionNote string `arg:"completion_note"`
		Force          bool   `arg:"force"`
		BlockerType    string `arg:"blocker_type"`
		Ticket         string `arg:"ticket"`
		Resolution     string `arg:"resolution"`
	}
	taskBlockArgs struct {
		lockedWriteArgs
		taskIDArg
		Reason      string `arg:"reason,required"`
		BlockerType string `arg:"blocker_type"`
		Ticket      string `arg:"ticket"`
		Force       bool   `arg:"force"`
	}
	taskUnblockArgs struct {
		lockedWriteArgs
		taskIDArg
		Resolution string `arg:"resolution"`
		Force      bool   `arg:"force"`
	}
	taskListBlockedArgs struct {
		specArgs
		pageArgs
	}
	taskAddArgs struct {
		lockedWriteArgs
		Parent             string         `arg:"parent,required"`
		Title              string         `arg:"title,required"`
		TaskType           string         `arg:"task_type"`
		Description        string         `arg:"description"`
		EstimatedHours     *float64       `arg:"estimated_hours"`
		Position           *int           `arg:"position"`
		FilePath           string         `arg:"file_path"`
		TaskCategory       string         `arg:"task_category"`
		AcceptanceCriteria []string       `arg:"acceptance_criteria"`
		Complexity         string         `arg:"complexity"`
		VerificationType   string         `arg:"verification_type"`
		Command            string         `arg:"command"`
		Expected           string         `arg:"expected"`
		BlockingMode       string         `arg:"blocking_mode"`
		ResearchType       string         `arg:"research_type"`
		Query              string         `arg:"query"`
		Metadata           map[string]any `arg:"metadata"`
	}
	taskRemoveArgs struct {
		lockedWriteArgs
		taskIDArg
		Cascade bool `arg:"cascade"`
	}
	taskMoveArgs struct {
		lockedWriteArgs
		taskIDArg
		Parent   string `arg:"parent"`
		Position *int   `arg:"position"`
	}
	taskDependencyArgs struct {
		lockedWriteArgs
		taskIDArg
		TargetID       string `arg:"target_id,required"`
		DependencyType string `arg:"dependency_type"`
	}
	taskRequirementArgs struct {
		lockedWriteArgs
		taskIDArg
		Text            string `arg:"text,required"`
		RequirementType string `arg:"requirement_type"`
	}
	taskEstimateArgs struct {
		lockedWriteArgs
		taskIDArg
		EstimatedHours *float64 `arg:"estimated_hours"`
		Complexity     string   `arg:"complexity"`
	}
	// taskMetadataArgs: update-metadata's objects and direct fields
	// (specs.MetadataFields); a nil field was not given.
	taskMetadataArgs struct {
		lockedWriteArgs
		taskIDArg
		Metadata           map[string]any `arg:"metadata"`
		CustomMetadata     map[string]any `arg:"custom_metadata"`
		Title              *string        `arg:"title"`
		Description        *string        `arg:"description"`
		FilePath           *string        `arg:"file_path"`
		TaskCategory       *string        `arg:"task_category"`
		AcceptanceCriteria []string       `arg:"acceptance_criteria"`
		Complexity         *string        `arg:"complexity"`
		EstimatedHours     *float64       `arg:"estimated_hours"`
		ActualHours        *float64       `arg:"actual_hours"`
		StatusNote         *string        `arg:"status_note"`
		VerificationType   *string        `arg:"verification_type"`
		Command            *string        `arg:"command"`
		Expected           *string        `arg:"expected"`
	}
	// taskMetadataBatchArgs: metadata-batch's filters, objects and direct
	// fields (specs.BatchMetadataFields); a nil field was not given.
	taskMetadataBatchArgs struct {
		lockedWriteArgs
		Updates        map[string]any `arg:"updates"`
		UpdateMetadata map[string]any `arg:"update_metadata"`
		Status         string         `arg:"status"`
		StatusFilter   string         `arg:"status_filter"`
		Parent         string         `arg:"parent"`
		ParentFilter   string         `arg:"parent_filter"`
		Pattern        string         `arg:"pattern"`
		NodeType       string         `arg:"node_type"`
		Description    *string        `arg:"description"`
		FilePath       *string        `arg:"file_path"`
		EstimatedHours *float64       `arg:"estimated_hours"`
		Category       *string        `arg:"category"`
		Labels         map[string]any `arg:"labels"`
		Owners         []string       `arg:"owners"`
	}
	taskProgressArgs struct {
		specArgs
		NodeID        string `arg:"node_id"`
		IncludePhases *bool  `arg:"include_phases"`
	}
	taskListArgs struct {
		specArgs
		pageArgs
		StatusFilter     string `arg:"status_filter"`
		IncludeCompleted *bool  `arg:"include_completed"`
	}
	taskQueryArgs struct {
		specArgs
		pageArgs
		Status   string `arg:"status"`
		Parent   string `arg:"parent"`
		NodeType string `arg:"node_type"`
	}
	taskHierarchyArgs struct {
		specArgs
		pageArgs
		MaxDepth        *int `arg:"max_depth"`
		IncludeMetadata bool `arg:"include_metadata"`
	}
	taskPrepareBatchArgs struct {
		specArgs
		MaxTasks    *int `arg:"max_tasks"`
		TokenBudget int  `arg:"token_budget"`
	}
	taskStartBatchArgs struct {
		lockedWriteArgs
		TaskIDs []string `arg:"task_ids,required"`
		Force   bool     `arg:"force"`
	}
	taskCompleteBatchArgs struct {
		lockedWriteArgs
		Completions []any `arg:"completions,required"`
		Force       bool  `arg:"force"`
	}
	taskResetBatchArgs struct {
		lockedWriteArgs
		TaskIDs        []string `arg:"task_ids"`
		ThresholdHours *float64 `arg:"threshold_hours"`
	}
	noArgs struct{}
)

// transition is what a status change's parameters ask for: the fields of
// specs.TransitionOptions that come from the call.
type transition struct {
	Force                                                  bool
	Note, CompletionNote, Reason, BlockerType, Ticket, Res string
	ActualHours                                            *float64
}

// transitionCall is the typed arguments of a status change: its write, its
// task and what it asks for.
type transitionCall interface {
	write() writeArgs
	task() string
	transition() transition
}

func (a taskStartArgs) write() writeArgs { return a.writeArgs }
func (a taskStartArgs) task() string     { return a.TaskID }
func (a taskStartArgs) transition() transition {
	return transition{Force: a.Force, Note: a.Note}
}

func (a taskCompleteArgs) write() writeArgs { return a.writeArgs }
func (a taskCompleteArgs) task() string     { return a.TaskID }
func (a taskCompleteArgs) transition() transition {
	return transition{Force: a.Force, Note: a.Note, CompletionNote: a.CompletionNote, ActualHours: a.ActualHours}
}

func (a taskReopenArgs) write() writeArgs       { return a.writeArgs }
func (a taskReopenArgs) task() string           { return a.TaskID }
func (a taskReopenArgs) transition() transition { return transition{Force: a.Force, Reason: a.Reason} }

func (a taskUpdateStatusArgs) write() writeArgs { return a.writeArgs }
func (a taskUpdateStatusArgs) task() string     { return a.TaskID }
func (a taskUpdateStatusArgs) transition() transition {
	return transition{Force: a.Force, Note: a.Note, CompletionNote: a.CompletionNote, Reason: a.Reason,
		BlockerType: a.BlockerType, Ticket: a.Ticket, Res: a.Resolution}
}

func (a taskBlockArgs) write() writeArgs { return a.writeArgs }
func (a taskBlockArgs) task() string     { return a.TaskID }
func (a taskBlockArgs) transition() transition {
	return transition{Force: a.Force, Reason: a.Reason, BlockerType: a.BlockerType, Ticket: a.Ticket}
}

func (a taskUnblockArgs) write() writeArgs { return a.writeArgs }
func (a taskUnblockArgs) task() string     { return a.TaskID }
func (a taskUnblockArgs) transition() transition {
	return transition{Force: a.Force, Res: a.Resolution}
}

// updates are update-metadata's keys: the objects' (custom_metadata, then
// metadata, which wins), then the direct fields given.
func (a taskMetadataArgs) updates() map[string]any {
	u := merged(a.CustomMetadata, a.Metadata)
	given(u, "title", a.Title)
	given(u, "description", a.Description)
	given(u, "file_path", a.FilePath)
	given(u, "task_category", a.TaskCategory)
	givenList(u, "acceptance_criteria", a.AcceptanceCriteria)
	given(u, "complexity", a.Complexity)
	given(u, "estimated_hours", a.EstimatedHours)
	given(u, "actual_hours", a.ActualHours)
	given(u, "status_note", a.StatusNote)
	given(u, "verification_type", a.VerificationType)
	given(u, "command", a.Command)
	given(u, "expected", a.Expected)
	return u
}

// updates are metadata-batch's keys: the objects' (update_metadata, then
// updates, which wins), then the direct fields given.
func (a taskMetadataBatchArgs) updates() map[string]any {
	u := merged(a.UpdateMetadata, a.Updates)
	given(u, "description", a.Description)
	given(u, "file_path", a.FilePath)
	given(u, "estimated_hours", a.EstimatedHours)
	given(u, "category", a.Category)
	if a.Labels != nil {
		u["labels"] = a.Labels
	}
	givenList(u, "owners", a.Owners)
	return u
}

// filters are metadata-batch's filters: specd's names, then foundry's
// aliases.
func (a taskMetadataBatchArgs) filters() specs.BatchFilters {
	return specs.BatchFilters{Status: orElse(a.Status, a.StatusFilter), Parent: orElse(a.Parent, a.ParentFilter),
		Pattern: a.Pattern, NodeType: a.NodeType}
}

// merged is the keys of the objects, later objects winning.
func merged(objects ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, o := range objects {
		for k, v := range o {
			out[k] = v
		}
	}
	return out
}

// given sets u[k] to *v when v was given.
func given[T any](u map[string]any, k string, v *T) {
	if v != nil {
		u[k] = *v
	}
}

// givenList sets u[k] to the strings of l (as the JSON array they came
// as) when l was given.
func givenList(u map[string]any, k string, l []string) {
	if l == nil {
		return
	}
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	u[k] = out
}

// orElse is s, or alias when s is empty.
func orElse(s, alias string) string {
	if s == "" {
		return alias
	}
	return s
}
