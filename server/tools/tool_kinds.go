package tools

import (
	"strconv"

	"heyaira/server/catalog"
	"heyaira/server/mcp"
)

// The argument kinds of the tools' own values, which their arg tags name
// beside the MCP endpoint's generic ones.
func init() {
	mcp.RegisterArg("limit", map[string]any{"type": "integer", "minimum": 1, "maximum": maxPageSize}, nil)
	mcp.RegisterArg("memoryKey", map[string]any{"type": "string", "pattern": memoryKeyPattern}, checkMemoryKey)
	// JSON Schema's maxLength counts characters; the bounds are bytes.
	mcp.RegisterArg("title", map[string]any{"type": "string", "minLength": 1,
		"description": "at most " + strconv.Itoa(maxTaskTitle) + " bytes of UTF-8"}, nil)
	mcp.RegisterArg("status", map[string]any{"type": "string", "enum": taskStatuses}, nil)
	mcp.RegisterArg("profile", map[string]any{"type": "string", "enum": profileNames()}, nil)
	mcp.RegisterArg("mode", map[string]any{"type": "string", "enum": catalog.Modes()}, nil)
	mcp.RegisterArg("note", map[string]any{"type": "string", "minLength": 1,
		"description": "at most " + strconv.Itoa(maxCorrectionNote) + " bytes of UTF-8"}, nil)
}

func profileNames() []string {
	var names []string
	for _, p := range catalog.Profiles() {
		names = append(names, p.Name)
	}
	return names
}
