package server

import (
	"strconv"

	"heyaira/server/catalog"
)

// inputSchema is the tool's JSON Schema: always an object that refuses
// properties it does not name.
func (t *Tool) inputSchema() map[string]any {
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
			"inputSchema": t.inputSchema(),
			"annotations": ann,
		})
	}
	return out
}

// argSchemas are the JSON Schemas arguments name in their arg tag.
var argSchemas = map[string]map[string]any{
	"uuid":      {"type": "string", "format": "uuid"},
	"cursor":    {"type": "string", "description": "next_cursor from the previous page"},
	"limit":     {"type": "integer", "minimum": 1, "maximum": maxPageSize},
	"text":      {"type": "string"},
	"memoryKey": {"type": "string", "pattern": memoryKeyPattern},
	// JSON Schema's maxLength counts characters; the bounds are bytes.
	"title":     {"type": "string", "minLength": 1, "description": "at most " + strconv.Itoa(maxTaskTitle) + " bytes of UTF-8"},
	"status":    {"type": "string", "enum": taskStatuses},
	"profile":   {"type": "string", "enum": profileNames()},
	"mode":      {"type": "string", "enum": catalog.Modes()},
	"view":      {"type": "string", "enum": []string{"full", "compact"}},
	"note":      {"type": "string", "minLength": 1, "description": "at most " + strconv.Itoa(maxCorrectionNote) + " bytes of UTF-8"},
	"startByte": {"type": "integer", "minimum": 0, "description": "byte offset; must be on a UTF-8 character boundary"},
	"maxBytes":  {"type": "integer", "minimum": 1, "maximum": 65536, "description": "clamped to the source's fragment limit"},
}

func profileNames() []string {
	var names []string
	for _, p := range catalog.Profiles() {
		names = append(names, p.Name)
	}
	return names
}
