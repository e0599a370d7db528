package specs

import "strings"

// Enum values nested in objects (phase-add-bulk's tasks[], metadata
// objects) match in any letter case, as the tools' top-level enums do and
// as foundry-mcp lowercases them: "High" is stored as "high". Values that
// match no allowed spelling are left for the checks to refuse.

// metadataEnums are the metadata keys whose values are enums.
var metadataEnums = map[string][]string{"task_category": TaskCategories, "complexity": Complexities,
	"verification_type": VerificationTypes, "blocking_mode": BlockingModes}

// canonicalEnum is the allowed spelling of v when v matches one ignoring
// case, else v unchanged.
func canonicalEnum(v string, allowed []string) string {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a
		}
	}
	return v
}

// canonicalMetadata returns m with the enum values of metadataEnums in
// their allowed spelling; m itself is not changed (a copy is returned when
// a value changes).
func canonicalMetadata(m map[string]any) map[string]any {
	out, copied := m, false
	for k, allowed := range metadataEnums {
		v, ok := m[k].(string)
		if !ok {
			continue
		}
		if c := canonicalEnum(v, allowed); c != v {
			if !copied {
				out, copied = make(map[string]any, len(m)), true
				for mk, mv := range m {
					out[mk] = mv
				}
			}
			out[k] = c
		}
	}
	return out
}

// canonical returns in with its enum fields (type, task_category,
// complexity, verification_type, blocking_mode and those in Metadata) in
// their allowed spelling.
func (in TaskInput) canonical() TaskInput {
	in.Type = NodeType(canonicalEnum(string(in.Type), []string{string(TypeTask), string(TypeSubtask), string(TypeVerify), string(TypeResearch)}))
	in.TaskCategory = canonicalEnum(in.TaskCategory, TaskCategories)
	in.Complexity = canonicalEnum(in.Complexity, Complexities)
	in.VerificationType = canonicalEnum(in.VerificationType, VerificationTypes)
	in.BlockingMode = canonicalEnum(in.BlockingMode, BlockingModes)
	in.Metadata = canonicalMetadata(in.Metadata)
	return in
}

// canonicalTasks is tasks with each canonical (a new slice).
func canonicalTasks(tasks []TaskInput) []TaskInput {
	out := make([]TaskInput, len(tasks))
	for i, t := range tasks {
		out[i] = t.canonical()
	}
	return out
}
