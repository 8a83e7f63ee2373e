package openrpc

import "encoding/json"

// ParamsSchema returns one schema for the params member of a call of m,
// assembled from its params as OpenRPC lays them out: the one param's
// schema for a method marked WholeParams; an object of the params, by name,
// for "by-name"; an array of them, by position, for "by-position"; and
// either, for "either" (the default). The required params are required:
// as members by name, as the leading elements by position. A method
// without params takes an object, or an empty array, whatever its
// structure.
func (m *Method) ParamsSchema() *Schema {
	if string(m.Extensions[WholeParams]) == "true" && len(m.Params) == 1 {
		return m.Params[0].Schema
	}
	if len(m.Params) == 0 {
		// No params: by name or by position, {} and [] say the same.
		return &Schema{AnyOf: []*Schema{{Type: Types{"object"}}, {Type: Types{"array"}, MaxItems: ptr(0)}}}
	}
	byName := &Schema{Type: Types{"object"}, Properties: map[string]*Schema{}}
	items := make([]*Schema, 0, len(m.Params))
	leading := 0
	for i, p := range m.Params {
		s := p.Schema
		if s == nil {
			s = &Schema{}
		}
		byName.Properties[p.Name] = s
		items = append(items, s)
		if p.Required {
			byName.Required = append(byName.Required, p.Name)
			if leading == i {
				leading++
			}
		}
	}
	byPosition := &Schema{Type: Types{"array"}, MinItems: &leading, MaxItems: ptr(len(items))}
	if len(items) > 0 { // draft-07 wants at least one schema in a tuple
		tuple, _ := json.Marshal(items)
		byPosition.Extra = map[string]json.RawMessage{"items": tuple}
	}
	switch m.ParamStructure {
	case "by-name":
		return byName
	case "by-position":
		return byPosition
	}
	return &Schema{AnyOf: []*Schema{byName, byPosition}}
}
