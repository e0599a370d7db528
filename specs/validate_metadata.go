package specs

import (
	"fmt"
	"strings"
)

// nodeMetadataRules are the checks of a node's metadata, in reporting order.
var nodeMetadataRules = []nodeRule{
	{"MISSING_VERIFICATION_TYPE", (*checker).ruleMissingVerificationType},
	{"INVALID_VERIFICATION_TYPE", (*checker).ruleVerificationType},
	{"INVALID_TASK_CATEGORY", (*checker).ruleTaskCategory},
	{"INVALID_COMPLEXITY", (*checker).ruleComplexity},
	{"INVALID_BLOCKING_MODE", (*checker).ruleBlockingMode},
	{"INVALID_ESTIMATE", (*checker).ruleEstimates},
	{"INVALID_FILE_PATH", (*checker).ruleFilePath},
	{"LEGACY_METADATA_FIELD", (*checker).ruleLegacyDetails},
	{"MISSING_FILE_PATH", (*checker).ruleMissingFilePath},
	{"MISSING_ACCEPTANCE_CRITERIA", (*checker).ruleMissingAcceptance},
}

// checkNodeMetadata runs the metadata rules on one node that has metadata.
func (c *checker) checkNodeMetadata(id string) {
	n := c.d.Hierarchy[id]
	if n == nil || n.Metadata == nil || strings.TrimSpace(id) == "" {
		return
	}
	for _, r := range nodeMetadataRules {
		r.check(c, id, n)
	}
}

func hasVerificationType(n *Node) bool {
	vt, ok := n.Metadata["verification_type"]
	return ok && vt != nil && vt != ""
}

// ruleMissingVerificationType (MISSING_VERIFICATION_TYPE): a verify node
// without verification_type; the fix picks run-tests when a command is
// set, else manual.
func (c *checker) ruleMissingVerificationType(id string, n *Node) {
	if n.Type != TypeVerify || hasVerificationType(n) {
		return
	}
	target := "manual"
	if n.MetaString("command") != "" {
		target = "run-tests"
	}
	c.add(SeverityWarning, CategoryNodeMetadata, "MISSING_VERIFICATION_TYPE", nodeLoc(id, "metadata", "verification_type"), id, "use "+target,
		func(d *Document) bool {
			n := d.Hierarchy[id]
			if n == nil || n.MetaString("verification_type") != "" {
				return false
			}
			n.SetMeta("verification_type", target)
			return true
		}, "verify node %s has no verification_type", id)
}

// ruleVerificationType (INVALID_VERIFICATION_TYPE): a verify node's
// verification_type outside VerificationTypes; the fix maps synonyms, else
// falls back to manual, as foundry's own fix does.
func (c *checker) ruleVerificationType(id string, n *Node) {
	if n.Type == TypeVerify && hasVerificationType(n) {
		c.enumCheck(id, "verification_type", "INVALID_VERIFICATION_TYPE", VerificationTypes, verificationSynonyms, SeverityError, "manual")
	}
}

// ruleTaskCategory (INVALID_TASK_CATEGORY): task_category outside
// TaskCategories.
func (c *checker) ruleTaskCategory(id string, _ *Node) {
	c.enumCheck(id, "task_category", "INVALID_TASK_CATEGORY", TaskCategories, categorySynonyms, SeverityWarning, "")
}

// ruleComplexity (INVALID_COMPLEXITY): complexity outside Complexities.
func (c *checker) ruleComplexity(id string, _ *Node) {
	c.enumCheck(id, "complexity", "INVALID_COMPLEXITY", Complexities, complexitySynonyms, SeverityWarning, "")
}

var blockingModeSynonyms = map[string]string{"blocking": "hard", "strict": "hard", "advisory": "soft", "off": "none"}

// ruleBlockingMode (INVALID_BLOCKING_MODE): a research node's blocking_mode
// outside BlockingModes; the fix falls back to soft.
func (c *checker) ruleBlockingMode(id string, n *Node) {
	if n.Type == TypeResearch {
		c.enumCheck(id, "blocking_mode", "INVALID_BLOCKING_MODE", BlockingModes, blockingModeSynonyms, SeverityWarning, "soft")
	}
}

// ruleEstimates (INVALID_ESTIMATE): estimated_hours or actual_hours that is
// not a non-negative number; fixable when it parses as one.
func (c *checker) ruleEstimates(id string, n *Node) {
	for _, k := range []string{"estimated_hours", "actual_hours"} {
		v, ok := n.Metadata[k]
		if !ok || v == nil {
			continue
		}
		if f, isNum := v.(float64); isNum && f >= 0 {
			continue
		}
		var fix func(*Document) bool
		if f, ok := toFloat(v); ok && f >= 0 {
			fix = estimateFix(id, k)
		}
		c.add(SeverityWarning, CategoryNodeMetadata, "INVALID_ESTIMATE", nodeLoc(id, "metadata", k), id, "write a non-negative number of hours", fix,
			"node %s has %s %s", id, k, truncateForDetails(fmt.Sprint(v)))
	}
}

// estimateFix replaces node id's metadata k, when it is not a float64
// already, by the number it reads as (toFloat).
func estimateFix(id, k string) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil {
			return false
		}
		f, ok := toFloat(n.Metadata[k])
		if !ok {
			return false
		}
		if _, isNum := n.Metadata[k].(float64); isNum {
			return false
		}
		n.SetMeta(k, f)
		return true
	}
}

// ruleFilePath (INVALID_FILE_PATH): file_path that is not a repo-relative
// path. Not fixable.
func (c *checker) ruleFilePath(id string, n *Node) {
	fp, ok := n.Metadata["file_path"]
	if !ok || fp == nil {
		return
	}
	if s, isStr := fp.(string); !isStr || !validRelativePath(s) {
		c.add(SeverityWarning, CategoryNodeMetadata, "INVALID_FILE_PATH", nodeLoc(id, "metadata", "file_path"), id, "use a repo-relative path", nil,
			"node %s has file_path %s, which is not a repo-relative path", id, truncateForDetails(fmt.Sprint(fp)))
	}
}

// ruleLegacyDetails (LEGACY_METADATA_FIELD): the legacy details field and
// no description; the fix moves it to description.
func (c *checker) ruleLegacyDetails(id string, n *Node) {
	details, ok := n.Metadata["details"]
	if !ok || n.MetaString("description") != "" || strings.Join(toStrings(details), "\n") == "" {
		return
	}
	c.add(SeverityInfo, CategoryNodeMetadata, "LEGACY_METADATA_FIELD", nodeLoc(id, "metadata", "details"), id, "move details to description",
		func(d *Document) bool {
			n := d.Hierarchy[id]
			if n == nil || n.MetaString("description") != "" {
				return false
			}
			t := strings.Join(toStrings(n.Metadata["details"]), "\n")
			if t == "" {
				return false
			}
			n.SetMeta("description", t)
			n.DeleteMeta("details")
			return true
		}, "node %s uses the legacy details field instead of description", id)
}

// changesCode reports the category of a leaf task or subtask that changes
// code (implementation or refactoring), or "".
func changesCode(n *Node) string {
	if (n.Type != TypeTask && n.Type != TypeSubtask) || n.Children.Len() != 0 {
		return ""
	}
	if cat := n.TaskCategory(); cat == "implementation" || cat == "refactoring" {
		return cat
	}
	return ""
}

// ruleMissingFilePath (MISSING_FILE_PATH): a leaf task that changes code
// names no file. Never fixed: a path is not guessed.
func (c *checker) ruleMissingFilePath(id string, n *Node) {
	if cat := changesCode(n); cat != "" && n.FilePath() == "" {
		c.add(SeverityWarning, CategoryNodeMetadata, "MISSING_FILE_PATH", nodeLoc(id, "metadata", "file_path"), id,
			"name the file it changes with task update-metadata (never guessed by fix)", nil,
			"%s task %s has no file_path", cat, id)
	}
}

// ruleMissingAcceptance (MISSING_ACCEPTANCE_CRITERIA): a leaf task that
// changes code has no acceptance criteria.
func (c *checker) ruleMissingAcceptance(id string, n *Node) {
	if cat := changesCode(n); cat != "" && len(n.MetaStrings("acceptance_criteria")) == 0 {
		c.add(SeverityInfo, CategoryNodeMetadata, "MISSING_ACCEPTANCE_CRITERIA", nodeLoc(id, "metadata", "acceptance_criteria"), id,
			"add acceptance criteria with task update-metadata", nil, "%s task %s has no acceptance criteria", cat, id)
	}
}
