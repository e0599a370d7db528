package tools

import (
	"fmt"
	"slices"
	"testing"

	"github.com/specd/specd/core/mcptool"
)

// TestTypedArgumentsMatchPublishedSchema: for every action with typed
// arguments, the struct's fields and the parameters server(action="schema")
// publishes for it agree in names, types and required-ness, so the two
// cannot drift; and every action of every tool is typed.
func TestTypedArgumentsMatchPublishedSchema(t *testing.T) {
	d := testDeps()
	d.Specs = declaredOnly{}
	reg := New(d)
	typed := 0
	for _, tool := range reg.Tools() {
		published := tool.Describe()
		for i, a := range tool.Actions {
			if a.Typed == nil {
				t.Errorf("%s %s: arguments not typed (declare it with Typed: mcptool.Typed(h))", tool.Name, a.Name)
				continue
			}
			typed++
			if err := sameParameters(mcptool.ArgFields(a.Typed), published[i], foundryContext[tool.Name]); err != nil {
				t.Errorf("%s %s: %v", tool.Name, a.Name, err)
			}
		}
	}
	if typed == 0 {
		t.Fatal("no action takes typed arguments")
	}
}

// sameParameters compares a typed struct's fields with an action's
// published parameters (name, required, schema type and item type).
// wrapped is the foundry context parameter acceptFoundryContext checks and
// removes before any handler runs (foundryContext): no struct binds it.
func sameParameters(fields []mcptool.ArgField, as mcptool.ActionSchema, wrapped string) error {
	byName := map[string]mcptool.ArgField{}
	for _, f := range fields {
		byName[f.Name] = f
	}
	params := slices.DeleteFunc(slices.Clone(as.Parameters), func(p mcptool.ParameterBrief) bool { return p.Name == wrapped })
	if len(byName) != len(params) {
		return fmt.Errorf("%d fields, %d published parameters", len(byName), len(params))
	}
	for _, p := range params {
		f, ok := byName[p.Name]
		if !ok {
			return fmt.Errorf("published parameter %q has no field", p.Name)
		}
		if f.Required != p.Required {
			return fmt.Errorf("%q: field required=%v, published required=%v", p.Name, f.Required, p.Required)
		}
		if want := publishedType(p.Schema); string(f.Type) != want {
			return fmt.Errorf("%q: field binds %q, published type %q", p.Name, f.Type, want)
		}
		items, _ := p.Schema["items"].(map[string]any)
		if (f.Items == mcptool.String) != (f.Type == mcptool.Array && items["type"] == "string") {
			return fmt.Errorf("%q: field items %q, published items %v", p.Name, f.Items, items)
		}
	}
	return nil
}

// publishedType is a parameter schema's type as a mcptool.ParamType
// spelling ("integer|string" for ["integer","string"]).
func publishedType(s map[string]any) string {
	switch ty := s["type"].(type) {
	case string:
		return ty
	case []string:
		return fmt.Sprint(ty[0], "|", ty[1])
	}
	return fmt.Sprint(s["type"])
}
