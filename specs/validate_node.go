package specs

import "strings"

// nodeRule is one check of a node's own fields: the diagnostic code it
// emits and the check. Rules run in table order, so a node's findings keep
// that order.
type nodeRule struct {
	code  string
	check func(c *checker, id string, n *Node)
}

// nodeRules are the checks of checkNodeFields after INVALID_NODE (a nil node
// or a blank id, which stops the others).
var nodeRules = []nodeRule{
	{"INVALID_ID", (*checker).ruleNodeID},
	{"MISSING_NODE_FIELD", (*checker).ruleMissingFields},
	{"INVALID_FIELD_TYPE", (*checker).ruleFieldTypes},
	{"INVALID_NODE_TYPE", (*checker).ruleNodeType},
	{"INVALID_STATUS", (*checker).ruleNodeStatus},
	{"EMPTY_TITLE", (*checker).ruleEmptyTitle},
}

// checkNodeFields runs the node rules on one node.
func (c *checker) checkNodeFields(id string) {
	n := c.d.Hierarchy[id]
	if n == nil || strings.TrimSpace(id) == "" {
		c.ruleInvalidNode(id)
		return
	}
	for _, r := range nodeRules {
		r.check(c, id, n)
	}
}

// ruleInvalidNode (INVALID_NODE): a nil entry or a blank id; the fix
// removes the entry.
func (c *checker) ruleInvalidNode(id string) {
	c.flagged[id] = true
	c.add(SeverityError, CategoryNode, "INVALID_NODE", nodeLoc(id), id, "remove the entry", removeEntryFix(id),
		"node %q is null or has a blank id", id)
}

// removeEntryFix deletes hierarchy entry id.
func removeEntryFix(id string) func(*Document) bool {
	return func(d *Document) bool {
		if _, ok := d.Hierarchy[id]; !ok {
			return false
		}
		delete(d.Hierarchy, id)
		return true
	}
}

// ruleNodeID (INVALID_ID): an id outside IDPattern. Not fixable: renaming
// would silently change what callers refer to.
func (c *checker) ruleNodeID(id string, _ *Node) {
	if !ValidID(id) {
		c.add(SeverityError, CategoryNode, "INVALID_ID", nodeLoc(id), id, "rename the node to an id matching "+IDPattern, nil,
			"node id %q is not an id (%s)", truncateForDetails(id), IDConstraint)
	}
}

// ruleMissingFields (MISSING_NODE_FIELD): one finding per absent field, in
// nodeFieldNames order; the root needs no parent.
func (c *checker) ruleMissingFields(id string, n *Node) {
	for _, nf := range nodeFieldNames {
		if n.absent&nf.bit == 0 || (nf.bit == fParent && id == RootID) {
			continue
		}
		sev := SeverityWarning
		if nf.bit&(fType|fTitle|fStatus|fParent|fChildren) != 0 {
			sev = SeverityError
		}
		suggestion, fix := missingFieldFix(id, nf.bit)
		c.add(sev, CategoryNode, "MISSING_NODE_FIELD", nodeLoc(id, nf.name), id, suggestion, fix, "node %s has no %s", id, nf.name)
	}
}

// missingFieldFix is the suggestion and fix for the absent field bit of id.
func missingFieldFix(id string, bit fieldSet) (string, func(*Document) bool) {
	switch bit {
	case fType:
		// Inferred from the id, else task (foundry's own fix's default).
		// inferType gives spec only for the root's id.
		if t := inferType(id); t != "" {
			return "infer the type from the id: " + string(t), missingTypeFix(id, t)
		}
		return "use the default type: " + string(TypeTask), missingTypeFix(id, TypeTask)
	case fParent:
		// Handled with the hierarchy (the listing parent or an inferred one).
		return "set the parent", missingParentFix(id)
	}
	return "add it with its default", missingDefaultFix(id, bit)
}

// missingTypeFix gives node id, when its type is absent, type t.
func missingTypeFix(id string, t NodeType) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil || n.absent&fType == 0 {
			return false
		}
		n.Type = t
		n.absent &^= fType
		n.malformed &^= fType
		return true
	}
}

// missingParentFix only clears node id's absent-parent mark: the orphan
// check decides the parent.
func missingParentFix(id string) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil {
			return false
		}
		n.absent &^= fParent
		return true
	}
}

// missingDefaultFix gives the absent field bit of node id its default (see
// setFieldDefault).
func missingDefaultFix(id string, bit fieldSet) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil || n.absent&bit == 0 {
			return false
		}
		setFieldDefault(n, id, bit)
		n.absent &^= bit
		n.malformed &^= bit
		return true
	}
}

// setFieldDefault gives the field bit of n its default unless it has a
// usable value already.
func setFieldDefault(n *Node, id string, bit fieldSet) {
	switch bit {
	case fTitle:
		if strings.TrimSpace(n.Title) == "" {
			n.Title = id
		}
	case fStatus:
		if !n.Status.Valid() {
			n.Status = StatusPending
		}
	case fChildren:
		if n.Children.isNil() {
			n.Children = ChildListOf([]string{})
		}
	case fMetadata:
		if n.Metadata == nil {
			n.Metadata = map[string]any{}
		}
	case fDependencies:
		n.Dependencies = Dependencies{Blocks: orEmpty(n.Dependencies.Blocks), BlockedBy: orEmpty(n.Dependencies.BlockedBy), Depends: orEmpty(n.Dependencies.Depends)}
	}
}

// ruleFieldTypes (INVALID_FIELD_TYPE): present fields of the wrong JSON
// type, already coerced by the parser; the fix keeps the coerced values.
func (c *checker) ruleFieldTypes(id string, n *Node) {
	bad := n.malformed &^ n.absent
	if bad == 0 {
		return
	}
	sev := SeverityWarning
	if bad&(fType|fTitle|fStatus|fParent|fChildren|fDependencies) != 0 {
		sev = SeverityError
	}
	c.add(sev, CategoryNode, "INVALID_FIELD_TYPE", nodeLoc(id), id, "keep the coerced values", keepCoercedFix(id),
		"node %s has fields of the wrong JSON type (%s); their values were coerced", id, strings.Join(bad.names(), ", "))
}

// keepCoercedFix clears node id's malformed marks of present fields (their
// coerced values stay) and gives it metadata when it has none.
func keepCoercedFix(id string) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil || n.malformed&^n.absent == 0 {
			return false
		}
		n.malformed &= n.absent
		if n.Metadata == nil {
			n.Metadata = map[string]any{}
		}
		return true
	}
}

// ruleNodeType (INVALID_NODE_TYPE): a type that is not a node type, or spec
// on another node than the root (the root's type is checkRoot's). The fix
// maps synonyms or infers the type from the id, else falls back to task, as
// foundry's own fix does.
func (c *checker) ruleNodeType(id string, n *Node) {
	if id == RootID || n.absent&fType != 0 || (n.Type.Valid() && n.Type != TypeSpec) {
		return
	}
	t := nodeTypeRepair(id, n.Type)
	c.add(SeverityError, CategoryNode, "INVALID_NODE_TYPE", nodeLoc(id, "type"), id, "use "+string(t), setTypeFix(id, t),
		"node %s has type %q", id, truncateForDetails(string(n.Type)))
}

// nodeTypeRepair is the type a non-root node id with the invalid type typ
// gets: typ's mapping (MapNodeType) unless that is spec, else the type its
// id suggests (never spec for a non-root id), else task.
func nodeTypeRepair(id string, typ NodeType) NodeType {
	if t, ok := MapNodeType(string(typ)); ok && t != TypeSpec {
		return t
	}
	if t := inferType(id); t != "" {
		return t
	}
	return TypeTask
}

// setTypeFix sets node id's type to t.
func setTypeFix(id string, t NodeType) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil || n.Type == t {
			return false
		}
		n.Type = t
		n.malformed &^= fType
		return true
	}
}

// ruleNodeStatus (INVALID_STATUS): an unknown status, or archived below
// the root. The fix maps synonyms, then a did-you-mean, else pending.
func (c *checker) ruleNodeStatus(id string, n *Node) {
	if n.absent&fStatus != 0 || (n.Status.Valid() && (n.Status != StatusArchived || id == RootID)) {
		return
	}
	st, ok, hint := statusRepair(n.Status, id)
	suggestion := "use " + string(st)
	if !ok {
		st = StatusPending
		suggestion = "unrecognised: reset to pending"
	}
	c.add(SeverityError, CategoryNode, "INVALID_STATUS", nodeLoc(id, "status"), id, suggestion, setStatusFix(id, st),
		"node %s has status %q%s", id, truncateForDetails(string(n.Status)), hint)
}

// setStatusFix sets node id's status to st.
func setStatusFix(id string, st Status) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil || n.Status == st {
			return false
		}
		n.Status = st
		n.malformed &^= fStatus
		return true
	}
}

// statusRepair is the status an invalid one maps to, whether there is one,
// and the did-you-mean hint for the message.
func statusRepair(s Status, id string) (st Status, ok bool, hint string) {
	st, ok = MapStatus(string(s))
	if !ok {
		var names []string
		for _, x := range Statuses() {
			names = append(names, string(x))
		}
		if dm := didYouMean(string(s), names); dm != "" {
			st, ok, hint = Status(dm), true, " (did you mean "+dm+"?)"
		}
	} else if st != s {
		hint = " (did you mean " + string(st) + "?)"
	}
	if st == StatusArchived && id != RootID {
		st, ok = StatusCompleted, true
	}
	return st, ok, hint
}

// ruleEmptyTitle (EMPTY_TITLE): a blank title; the fix uses the id.
func (c *checker) ruleEmptyTitle(id string, n *Node) {
	if n.absent&fTitle != 0 || strings.TrimSpace(n.Title) != "" {
		return
	}
	c.add(SeverityWarning, CategoryNode, "EMPTY_TITLE", nodeLoc(id, "title"), id, "use the id as the title until someone renames it", titleFromIDFix(id),
		"node %s has an empty title", id)
}

// titleFromIDFix gives node id, when its title is blank, its id as title.
func titleFromIDFix(id string) func(*Document) bool {
	return func(d *Document) bool {
		n := d.Hierarchy[id]
		if n == nil || strings.TrimSpace(n.Title) != "" {
			return false
		}
		n.Title = id
		return true
	}
}
