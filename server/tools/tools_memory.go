package tools

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"heyaira/server/mcp"
	"heyaira/store"
)

const maxMemoryBytes = 64 << 10

var errMemoryNotFound = mcp.NewCoded("not_found", "no such memory key in this project")

// The memory key rule (schema.sql's CHECK on memory.key): its schema
// pattern, its check and its message all come from these two.
const (
	memoryKeyChars = "[A-Za-z0-9._/-]"
	maxMemoryKey   = 200
)

var (
	memoryKeyPattern = fmt.Sprintf("^%s{1,%d}$", memoryKeyChars, maxMemoryKey)
	memoryKeyRE      = regexp.MustCompile(memoryKeyPattern)
	errMemoryKey     = fmt.Errorf("key must be 1-%d bytes of %s", maxMemoryKey, memoryKeyChars)
)

// memoryTools keep project memory: short keys to text.
type memoryTools struct {
	st    *store.DB
	pages pager
}

func (m *memoryTools) tools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "memory_put", Title: "Put memory", Scope: "memory:write", Destructive: true,
			Description: fmt.Sprintf("Create or replace the project memory entry at key (≤ %d bytes of %s) "+
				"with text content (≤ 64 KiB).", maxMemoryKey, memoryKeyChars),
			ToolArgs: mcp.Typed(m.put)},
		{Name: "memory_get", Title: "Get memory", Scope: "memory:read", ReadOnly: true,
			Description: "Return the project memory entry at key.",
			ToolArgs:    mcp.Typed(m.get)},
		{Name: "memory_list", Title: "List memory", Scope: "memory:read", ReadOnly: true,
			Description: "List project memory keys (without content) in key order, optionally with a key prefix; follow next_cursor for more.",
			ToolArgs:    mcp.Typed(m.list)},
		{Name: "memory_delete", Title: "Delete memory", Scope: "memory:write", Destructive: true,
			Description: "Delete the project memory entry at key.",
			ToolArgs:    mcp.Typed(m.delete)},
	}
}

func checkMemoryKey(k string) error {
	if !memoryKeyRE.MatchString(k) {
		return errMemoryKey
	}
	return nil
}

type memoryPutArgs struct {
	Key     *string `json:"key" arg:"memoryKey,required"`
	Content *string `json:"content" arg:"text,required"`
}

func (m *memoryTools) put(ctx context.Context, p mcp.Principal, a *memoryPutArgs) (any, error) {
	if len(*a.Content) > maxMemoryBytes {
		return nil, mcp.InvalidArgument("content must be at most 65536 bytes")
	}
	if err := noNUL(*a.Content); err != nil {
		return nil, err
	}
	return m.st.PutMemory(ctx, p.Auth.ProjectID, *a.Key, *a.Content)
}

type memoryKeyArgs struct {
	Key *string `json:"key" arg:"memoryKey,required"`
}

func (m *memoryTools) get(ctx context.Context, p mcp.Principal, a *memoryKeyArgs) (any, error) {
	mem, err := m.st.GetMemory(ctx, p.Auth.ProjectID, *a.Key)
	return mem, mcp.NotFound(err, errMemoryNotFound)
}

func (m *memoryTools) delete(ctx context.Context, p mcp.Principal, a *memoryKeyArgs) (any, error) {
	if err := m.st.DeleteMemory(ctx, p.Auth.ProjectID, *a.Key); err != nil {
		return nil, mcp.NotFound(err, errMemoryNotFound)
	}
	return map[string]any{"key": *a.Key, "deleted": true}, nil
}

type memoryListArgs struct {
	Prefix *string `json:"prefix" arg:"text"`
	Limit  *int    `json:"limit" arg:"limit"`
	Cursor *string `json:"cursor" arg:"cursor"`
}

func (m *memoryTools) list(ctx context.Context, p mcp.Principal, a *memoryListArgs) (any, error) {
	limit, err := pageSize(a.Limit)
	if err != nil {
		return nil, err
	}
	prefix := deref(a.Prefix)
	if len(prefix) > maxMemoryKey {
		return nil, mcp.InvalidArgument(fmt.Sprintf("prefix must be at most %d bytes", maxMemoryKey))
	}
	return listPage(m.pages, "memory_list", p, a.Cursor, limit, "items", func(after string) ([]store.MemoryInfo, error) {
		return m.st.ListMemory(ctx, p.Auth.ProjectID, prefix, after, limit)
	}, func(mi store.MemoryInfo) string { return mi.Key }, nil)
}

// noNUL refuses texts with a NUL byte, which PostgreSQL text cannot store.
func noNUL(texts ...string) error {
	for _, s := range texts {
		if strings.IndexByte(s, 0) >= 0 {
			return mcp.InvalidArgument("text must not contain NUL characters")
		}
	}
	return nil
}
