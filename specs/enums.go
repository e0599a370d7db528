package specs

// Enums are the enumerations specs use (spec schema's answer).
type Enums struct {
	NodeTypes           []NodeType  `json:"node_types"`
	Statuses            []Status    `json:"statuses"`
	LifecycleFolders    []Lifecycle `json:"lifecycle_folders"`
	TaskCategories      []string    `json:"task_categories"`
	Complexities        []string    `json:"complexities"`
	VerificationTypes   []string    `json:"verification_types"`
	VerificationResults []string    `json:"verification_results"`
	JournalEntryTypes   []string    `json:"journal_entry_types"`
	BlockerTypes        []string    `json:"blocker_types"`
	BlockingModes       []string    `json:"blocking_modes"`
	RequirementTypes    []string    `json:"requirement_types"`
	DependencyTypes     []string    `json:"dependency_types"`
	RiskLevels          []string    `json:"risk_levels"`
	Templates           []string    `json:"templates"`
}

// SpecEnums lists every enumeration specs use, templates by name.
func SpecEnums() Enums {
	var templates []string
	for _, t := range Templates() {
		templates = append(templates, t.Name)
	}
	return Enums{
		NodeTypes: NodeTypes(), Statuses: Statuses(), LifecycleFolders: Lifecycles(),
		TaskCategories: TaskCategories, Complexities: Complexities, VerificationTypes: VerificationTypes,
		VerificationResults: VerificationResults, JournalEntryTypes: JournalEntryTypes, BlockerTypes: BlockerTypes,
		BlockingModes: BlockingModes, RequirementTypes: RequirementTypes, DependencyTypes: DependencyTypes,
		RiskLevels: RiskLevels, Templates: templates,
	}
}

// SpecRow is one spec of a spec listing; the progress fields are there
// unless the listing leaves them out. Status is the lifecycle folder, as in
// foundry-mcp's spec list (Lifecycle says the same, under specd's older
// name); WorkStatus is the spec's own status (pending, in_progress,
// completed).
type SpecRow struct {
	SpecID      string `json:"spec_id"`
	Title       string `json:"title"`
	Lifecycle   string `json:"lifecycle"`
	Status      string `json:"status"`
	WorkStatus  string `json:"work_status"`
	Version     int64  `json:"version"`
	LastUpdated string `json:"last_updated"`
	*SpecProgress
}

// SpecProgress is a spec's task counts, progress and current phase.
type SpecProgress struct {
	TotalTasks         int    `json:"total_tasks"`
	CompletedTasks     int    `json:"completed_tasks"`
	ProgressPercentage int    `json:"progress_percentage"`
	CurrentPhase       string `json:"current_phase"`
}

// ListRows are the rows of a listing page, with progress when asked.
func ListRows(rows []RepoSummary, withProgress bool) []SpecRow {
	items := make([]SpecRow, 0, len(rows))
	for _, row := range rows {
		item := SpecRow{SpecID: row.SpecID, Title: row.Title, Lifecycle: row.Lifecycle, Status: row.Lifecycle, WorkStatus: row.Status, Version: row.Version, LastUpdated: row.LastUpdated}
		if withProgress {
			item.SpecProgress = &SpecProgress{TotalTasks: row.TotalTasks, CompletedTasks: row.CompletedTasks,
				ProgressPercentage: row.ProgressPercentage, CurrentPhase: row.CurrentPhase}
		}
		items = append(items, item)
	}
	return items
}
