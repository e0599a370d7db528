package specs

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/specd/specd/core/errcode"
)

// CompareIDs orders ids naturally: runs of digits compare as numbers, so
// task-1-2 < task-1-10; other runs compare bytewise. Ties (e.g. "01" vs "1")
// fall back to bytewise order, so the order is total.
func CompareIDs(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si := i
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			sj := j
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na := strings.TrimLeft(a[si:i], "0")
			nb := strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				if len(na) < len(nb) {
					return -1
				}
				return 1
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// SortIDs sorts ids in natural order (see CompareIDs).
func SortIDs(ids []string) {
	sort.Slice(ids, func(i, j int) bool { return CompareIDs(ids[i], ids[j]) < 0 })
}

// Slug lowercases name and turns every run of characters outside [a-z0-9]
// into one "-", trimmed at both ends. It returns "spec" when nothing is left.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], "-")
	}
	if s == "" {
		return "spec"
	}
	return s
}

// GenerateSpecID returns slug(name)-YYYY-MM-DD-NNN for the UTC date of now,
// with NNN the first sequence number from 001 for which exists returns false
// (exists nil means nothing exists). After 999 the sequence keeps counting
// with more digits.
func GenerateSpecID(name string, now time.Time, exists func(id string) bool) string {
	base := Slug(name) + "-" + now.UTC().Format("2006-01-02") + "-"
	for n := 1; ; n++ {
		id := base + fmt.Sprintf("%03d", n)
		if exists == nil || !exists(id) {
			return id
		}
	}
}

// idNumbers returns the numeric segments after prefix in id ("task-1-10" with
// prefix "task" → [1 10]); ok is false when a segment is not a number.
func idNumbers(id, prefix string) ([]int, bool) {
	if !strings.HasPrefix(id, prefix+"-") {
		return nil, false
	}
	parts := strings.Split(id[len(prefix)+1:], "-")
	out := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// singleNumber is N of an id prefix-N (N ≥ 0); ok is false for any other
// id.
func singleNumber(id, prefix string) (int, bool) {
	if nums, ok := idNumbers(id, prefix); ok && len(nums) == 1 {
		return nums[0], true
	}
	return 0, false
}

// phaseNumber returns N of a phase-N id, or the phase's 1-based position
// among the root's children when its id has another form.
func phaseNumber(s *Spec, phaseID string) int {
	if nums, ok := idNumbers(phaseID, "phase"); ok && len(nums) == 1 {
		return nums[0]
	}
	if r := s.Root(); r != nil {
		if i := indexOf(r.Children, phaseID); i >= 0 {
			return i + 1
		}
	}
	return 0
}

// NewPhaseID returns an unused phase-N id: N is one more than the largest
// phase number among the root's children, skipping numbers whose phase or
// verify-N-1 id is taken.
func NewPhaseID(s *Spec) string {
	max := 0
	if r := s.Root(); r != nil {
		for _, c := range r.Children {
			if nums, ok := idNumbers(c, "phase"); ok && len(nums) == 1 && nums[0] > max {
				max = nums[0]
			}
		}
	}
	for n := max + 1; ; n++ {
		id := "phase-" + strconv.Itoa(n)
		if !s.Has(id) && !s.Has(fmt.Sprintf("verify-%d-1", n)) && !s.Has(fmt.Sprintf("task-%d-1", n)) {
			return id
		}
	}
}

// NewNodeID returns an unused id for a node of type t under parentID:
// subtasks (and tasks nested under a task or subtask) extend the parent's id
// (task-1-2 → task-1-2-1); other nodes under a phase or group are
// <type>-N-M with N the phase number and M one more than the largest M among
// the parent's children with that prefix. The id is checked against the
// whole view and incremented until free.
func NewNodeID(s *Spec, parentID string, t NodeType) string {
	parent := s.Node(parentID)
	var prefix string
	if parent != nil && (parent.Type == TypeTask || parent.Type == TypeSubtask) && (t == TypeTask || t == TypeSubtask) {
		prefix = parentID
	} else {
		prefix = fmt.Sprintf("%s-%d", idTypePrefix(t), phaseNumber(s, phaseOf(s, parentID)))
	}
	max := 0
	if parent != nil {
		dash := prefix + "-" // once, not once per child: a phase may hold thousands
		for _, c := range parent.Children {
			if !strings.HasPrefix(c, dash) {
				continue
			}
			if n, err := strconv.Atoi(c[len(dash):]); err == nil && n > max {
				max = n
			}
		}
	}
	for m := max + 1; ; m++ {
		id := prefix + "-" + strconv.Itoa(m)
		if !s.Has(id) {
			return id
		}
	}
}

func idTypePrefix(t NodeType) string {
	switch t {
	case TypeVerify:
		return "verify"
	case TypeResearch:
		return "research"
	case TypeGroup:
		return "group"
	case TypePhase:
		return "phase"
	}
	return "task"
}

// phaseOf returns the id of the phase containing id (id itself when it is a
// phase), or "" when it has none.
func phaseOf(s *Spec, id string) string {
	for guard := 0; id != "" && guard < 1000; guard++ {
		n := s.Node(id)
		if n == nil {
			return ""
		}
		if n.Type == TypePhase {
			return id
		}
		id = n.Parent
	}
	return ""
}

// IDPattern is the grammar of every spec id and node id: lowercase ASCII
// letters and digits, with ".", "_" and "-" between them; it starts with a
// letter or digit, holds no ".." (a dot is always followed by a letter,
// digit, "_" or "-") and so never ends with a dot. An id is an identifier,
// never a path: no "/", "\", NUL, space or upper case can appear, so an id
// joined to a folder name always names a file directly inside that folder.
// Upper case is left out because foundry-mcp only ever generates lowercase
// ids (slugs of the name plus a date, spec-root, phase-N, task-N-M, …) and
// because ids become file names on export, where "Task-1" and "task-1" would
// be one file on a case-insensitive file system.
const IDPattern = `^[a-z0-9](?:\.?[a-z0-9_-])*$`

// MaxIDLength is the longest valid id, in bytes (every valid id is ASCII).
const MaxIDLength = 128

var idRE = regexp.MustCompile(IDPattern)

// ValidID reports whether id follows IDPattern and is at most MaxIDLength
// bytes long.
func ValidID(id string) bool {
	return len(id) > 0 && len(id) <= MaxIDLength && idRE.MatchString(id)
}

// IDConstraint describes the id grammar in one phrase, for error details.
const IDConstraint = "an id: 1-128 of a-z 0-9 . _ - starting with a letter or digit, no \"..\", no trailing dot"

// CheckID returns nil when id is valid, else an INVALID_FORMAT *core.Error
// naming field and the received value.
func CheckID(field, id string) error {
	if ValidID(id) {
		return nil
	}
	e := newErr(errcode.InvalidFormat, field, "%s must be an id (lowercase letters, digits, '.', '_', '-'; at most %d characters; no '..'), not a path or free text", field, MaxIDLength)
	e.WithDetail("constraint", IDConstraint).WithDetail("pattern", IDPattern).WithDetail("received", truncateForDetails(id))
	return e
}
