package specs

import "strings"

// topRules are the checks of the document's top-level fields, in reporting
// order (the codes each emits are in its doc comment).
var topRules = []func(c *checker){
	(*checker).ruleSpecID,
	(*checker).ruleSpecTitle,
	func(c *checker) { c.ruleTimestamp("generated", c.d.Generated) },
	func(c *checker) { c.ruleTimestamp("last_updated", c.d.LastUpdated) },
	(*checker).ruleLifecycle,
	(*checker).ruleMetadataObject,
	(*checker).ruleHierarchyObject,
	(*checker).ruleTopFieldTypes,
}

func (c *checker) checkTopLevel() {
	for _, check := range topRules {
		check(c)
	}
}

// ruleSpecID: no spec_id (MISSING_REQUIRED_FIELD), one outside IDPattern
// (INVALID_ID) or outside slug-YYYY-MM-DD-NNN (INVALID_SPEC_ID_FORMAT, a
// warning). Never fixed: the id is how callers name the spec.
func (c *checker) ruleSpecID() {
	id := c.d.SpecID
	switch {
	case id == "":
		c.add(SeverityError, CategoryStructure, "MISSING_REQUIRED_FIELD", "spec_id", "", "set spec_id to slug-YYYY-MM-DD-NNN", nil,
			"the spec has no spec_id")
	case !ValidID(id):
		c.add(SeverityError, CategoryStructure, "INVALID_ID", "spec_id", "", "choose an id matching "+IDPattern, nil,
			"spec_id %q is not an id (%s)", truncateForDetails(id), IDConstraint)
	case !specIDPattern.MatchString(id):
		c.add(SeverityWarning, CategoryStructure, "INVALID_SPEC_ID_FORMAT", "spec_id", "", "use slug-YYYY-MM-DD-NNN", nil,
			"spec_id %q does not follow slug-YYYY-MM-DD-NNN", truncateForDetails(id))
	}
}

// ruleSpecTitle (MISSING_REQUIRED_FIELD): a blank title; the fix uses the
// root's title, else the spec id, else "Untitled spec".
func (c *checker) ruleSpecTitle() {
	if strings.TrimSpace(c.d.Title) != "" {
		return
	}
	c.add(SeverityError, CategoryStructure, "MISSING_REQUIRED_FIELD", "title", "", "use the root node's title or the spec id", func(d *Document) bool {
		t := d.SpecID
		if r := d.Hierarchy[RootID]; r != nil && strings.TrimSpace(r.Title) != "" {
			t = r.Title
		}
		if strings.TrimSpace(t) == "" {
			t = "Untitled spec"
		}
		d.Title = t
		return true
	}, "the spec has no title")
}

// ruleTimestamp: the timestamp name (generated or last_updated) is missing
// (MISSING_REQUIRED_FIELD; the fix copies the other one, else now) or not
// UTC RFC 3339 (INVALID_TIMESTAMP; fixable when it parses).
func (c *checker) ruleTimestamp(name, value string) {
	switch {
	case value == "":
		c.add(SeverityError, CategoryStructure, "MISSING_REQUIRED_FIELD", name, "", "set it from the other timestamp, else now", func(d *Document) bool {
			v, o := fieldPtr(d, name)
			if *v != "" {
				return false
			}
			if t, ok := ParseTime(*o); ok {
				*v = FormatTime(t)
			} else {
				*v = FormatTime(c.clock.Now())
			}
			return true
		}, "the spec has no %s timestamp", name)
	case !strictTime(value):
		var fix func(*Document) bool
		if _, ok := ParseTime(value); ok {
			fix = func(d *Document) bool {
				v, _ := fieldPtr(d, name)
				t, ok := ParseTime(*v)
				if !ok {
					return false
				}
				*v = FormatTime(t)
				return true
			}
		}
		c.add(SeverityWarning, CategoryStructure, "INVALID_TIMESTAMP", name, "", "write UTC RFC 3339 with Z", fix,
			"%s %q is not a UTC RFC 3339 timestamp", name, truncateForDetails(value))
	}
}

// ruleLifecycle (INVALID_LIFECYCLE): an unknown lifecycle; the fix removes
// it (the import folder decides).
func (c *checker) ruleLifecycle() {
	if c.d.Lifecycle == "" || c.d.Lifecycle.Valid() {
		return
	}
	c.add(SeverityError, CategoryStructure, "INVALID_LIFECYCLE", "lifecycle", "", "remove it: the import folder decides", func(d *Document) bool {
		d.Lifecycle = ""
		return true
	}, "lifecycle %q is not one of pending, active, completed, archived", truncateForDetails(string(c.d.Lifecycle)))
}

// ruleMetadataObject (MISSING_REQUIRED_FIELD, a warning): no usable
// metadata object; the fix adds an empty one.
func (c *checker) ruleMetadataObject() {
	d := c.d
	if d.absent&dMetadata == 0 && d.malformed&dMetadata == 0 && d.Metadata != nil {
		return
	}
	c.add(SeverityWarning, CategoryStructure, "MISSING_REQUIRED_FIELD", "metadata", "", "add an empty metadata object", func(d *Document) bool {
		if d.Metadata == nil {
			d.Metadata = map[string]any{}
		}
		d.absent &^= dMetadata
		d.malformed &^= dMetadata
		return true
	}, "the spec has no metadata object")
}

// ruleHierarchyObject (MISSING_REQUIRED_FIELD): no hierarchy; the fix adds
// an empty one (MISSING_SPEC_ROOT follows).
func (c *checker) ruleHierarchyObject() {
	if c.d.Hierarchy != nil {
		return
	}
	c.add(SeverityError, CategoryStructure, "MISSING_REQUIRED_FIELD", "hierarchy", "", "add a hierarchy with a spec-root node", func(d *Document) bool {
		if d.Hierarchy != nil {
			return false
		}
		d.Hierarchy = map[string]*Node{}
		d.absent &^= dHierarchy
		d.malformed &^= dHierarchy
		return true
	}, "the spec has no hierarchy object")
}

// ruleTopFieldTypes (INVALID_FIELD_TYPE): top-level scalars of the wrong
// JSON type, already coerced; the fix keeps the coerced values.
func (c *checker) ruleTopFieldTypes() {
	if c.d.malformed&(dSpecID|dTitle|dGenerated|dLastUpdated|dVersion|dProgress|dStatus|dCurrentPhase|dLifecycle) == 0 {
		return
	}
	c.add(SeverityWarning, CategoryStructure, "INVALID_FIELD_TYPE", "spec", "", "rewrite the top-level fields with their JSON types", func(d *Document) bool {
		d.malformed &= dMetadata | dHierarchy | dJournal
		return true
	}, "some top-level fields have the wrong JSON type and were coerced")
}
