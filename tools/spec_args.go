package tools

// The spec tool's typed arguments, one struct per action (mcptool.Typed);
// Registry.Add checks each against the declaration in spec.go,
// specanalysis.go and spec_foundry.go.

// spec is the spec a call names (specArged).
func (a specArgs) spec() string { return a.SpecID }

// specArged is the typed arguments of an action over one spec.
type specArged interface{ spec() string }

// foundryNoteArgs are foundry's create_backup and auto_fix, answered with
// a note when given (foundryNotes).
type foundryNoteArgs struct {
	AutoFix      *bool `arg:"auto_fix"`
	CreateBackup *bool `arg:"create_backup"`
}

type (
	specFindArgs struct {
		SpecID string `arg:"spec_id"`
		Query  string `arg:"query"`
	}
	specGetArgs struct {
		specArgs
		MaxTokens *int `arg:"max_tokens"`
		Version   any  `arg:"version"`
	}
	specListArgs struct {
		pageArgs
		Status          string `arg:"status"`
		IncludeProgress *bool  `arg:"include_progress"`
	}
	specValidateArgs struct {
		specArgs
		foundryNoteArgs
	}
	specFixArgs struct {
		writeArgs
		foundryNoteArgs
	}
	specHistoryArgs struct {
		specArgs
		pageArgs
		Version any `arg:"version"`
	}
	specExportArgs struct {
		Path   string `arg:"path,required"`
		SpecID string `arg:"spec_id"`
	}
	specImportArgs struct {
		Path      string `arg:"path,required"`
		AutoFix   *bool  `arg:"auto_fix"`
		Overwrite bool   `arg:"overwrite"`
		DryRun    bool   `arg:"dry_run"`
	}
	analyzeDepsArgs struct {
		specArgs
		BottleneckThreshold *int `arg:"bottleneck_threshold"`
	}
	duplicatesArgs struct {
		specArgs
		Threshold float64 `arg:"threshold"`
		MaxPairs  int     `arg:"max_pairs"`
		Scope     string  `arg:"scope"`
	}
	specDiffArgs struct {
		specArgs
		pageArgs
		Version any    `arg:"version"`
		Target  string `arg:"target"`
	}
)
