package tools

import (
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// idParam declares a string parameter that carries a spec or node id. Every
// such parameter shares this one declaration of the grammar (specs.IDPattern,
// at most specs.MaxIDLength characters), so the schema advertises it and the
// validator refuses anything else — a path, "..", upper case, NUL — with
// INVALID_FORMAT naming the field and the received value, before any
// handler runs.
func idParam(name, description string) mcptool.Param {
	return mcptool.Param{Name: name, Type: mcptool.String, MaxLength: specs.MaxIDLength, Pattern: specs.IDPattern, Description: description}
}

// idListParam is idParam for an array of ids.
func idListParam(name string, maxItems int, description string) mcptool.Param {
	return mcptool.Param{Name: name, Type: mcptool.Array, Items: mcptool.String, MaxItems: maxItems, MaxLength: specs.MaxIDLength, Pattern: specs.IDPattern, Description: description}
}

//END
