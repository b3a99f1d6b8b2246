package mcp

// InputSchema is the tool's JSON Schema: always an object that refuses
// properties it does not name.
func (t *Tool) InputSchema() map[string]any {
	props := map[string]any{}
	for _, a := range t.args {
		props[a.name] = a.schema
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(t.required) > 0 {
		s["required"] = t.required
	}
	return s
}

// list returns every tool's definition for tools/list, whatever the caller's
// scopes: a client learns what exists, and a 403 names the scope it lacks.
func (tt *ToolTable) list() []map[string]any {
	out := make([]map[string]any, 0, len(tt.tools))
	for _, t := range tt.tools {
		ann := map[string]any{"title": t.Title, "readOnlyHint": t.ReadOnly, "openWorldHint": false}
		if !t.ReadOnly {
			ann["destructiveHint"], ann["idempotentHint"] = t.Destructive, t.Destructive
		}
		out = append(out, map[string]any{
			"name":        t.Name,
			"title":       t.Title,
			"description": t.Description,
			"inputSchema": t.InputSchema(),
			"annotations": ann,
		})
	}
	return out
}

// argSchemas are the JSON Schemas arguments name in their arg tag: the
// generic kinds here, and those of the tools' own values added by
// RegisterArg.
var argSchemas = map[string]map[string]any{
	"uuid":      {"type": "string", "format": "uuid"},
	"cursor":    {"type": "string", "description": "next_cursor from the previous page"},
	"text":      {"type": "string"},
	"object":    {"type": "object"},
	"view":      {"type": "string", "enum": []string{"full", "compact"}},
	"startByte": {"type": "integer", "minimum": 0, "description": "byte offset; must be on a UTF-8 character boundary"},
	"maxBytes":  {"type": "integer", "minimum": 1, "maximum": 65536, "description": "clamped to the source's fragment limit"},
}

// RegisterArg adds an argument kind that arg tags may name, with its JSON
// Schema and, for a string, the check beyond its presence (nil: none), which
// says in its message what the schema says. The tools register theirs at
// init, before any Typed.
func RegisterArg(kind string, schema map[string]any, check func(s string) error) {
	argSchemas[kind] = schema
	if check != nil {
		argChecks[kind] = check
	}
}
