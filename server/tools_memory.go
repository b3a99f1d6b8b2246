package server

import (
	"context"
	"errors"
	"regexp"

	"heyaira/store"
)

const maxMemoryBytes = 64 << 10

var errMemoryNotFound = newCoded("not_found", "no such memory key in this project")

var memoryKeyRE = regexp.MustCompile(`^[A-Za-z0-9._/-]{1,200}$`)

// memoryTools keep project memory: short keys to text.
type memoryTools struct {
	st    *store.DB
	pages pager
}

func (m *memoryTools) tools() []*tool {
	return []*tool{
		{name: "memory_put", title: "Put memory", scope: "memory:write",
			description: "Create or replace the project memory entry at key (≤ 200 bytes of [A-Za-z0-9._/-]) with text content (≤ 64 KiB).",
			toolArgs:    typed(m.put)},
		{name: "memory_get", title: "Get memory", scope: "memory:read", readOnly: true,
			description: "Return the project memory entry at key.",
			toolArgs:    typed(m.get)},
		{name: "memory_list", title: "List memory", scope: "memory:read", readOnly: true,
			description: "List project memory keys (without content) in key order, optionally with a key prefix; follow next_cursor for more.",
			toolArgs:    typed(m.list)},
		{name: "memory_delete", title: "Delete memory", scope: "memory:write",
			description: "Delete the project memory entry at key.",
			toolArgs:    typed(m.delete)},
	}
}

func validMemoryKey(k *string) error {
	if k == nil {
		return invalidArgument("key is required")
	}
	if !memoryKeyRE.MatchString(*k) {
		return invalidArgument("key must be 1-200 bytes of [A-Za-z0-9._/-]")
	}
	return nil
}

type memoryPutArgs struct {
	Key     *string `json:"key" arg:"memoryKey,required"`
	Content *string `json:"content" arg:"text,required"`
}

func (m *memoryTools) put(ctx context.Context, p principal, a *memoryPutArgs) (any, error) {
	if err := validMemoryKey(a.Key); err != nil {
		return nil, err
	}
	if a.Content == nil {
		return nil, invalidArgument("content is required")
	}
	if len(*a.Content) > maxMemoryBytes {
		return nil, invalidArgument("content must be at most 65536 bytes")
	}
	if err := noNUL(*a.Content); err != nil {
		return nil, err
	}
	return m.st.PutMemory(ctx, p.auth.ProjectID, *a.Key, *a.Content)
}

type memoryKeyArgs struct {
	Key *string `json:"key" arg:"memoryKey,required"`
}

func (m *memoryTools) get(ctx context.Context, p principal, a *memoryKeyArgs) (any, error) {
	if err := validMemoryKey(a.Key); err != nil {
		return nil, err
	}
	mem, err := m.st.GetMemory(ctx, p.auth.ProjectID, *a.Key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errMemoryNotFound
	}
	return mem, err
}

func (m *memoryTools) delete(ctx context.Context, p principal, a *memoryKeyArgs) (any, error) {
	if err := validMemoryKey(a.Key); err != nil {
		return nil, err
	}
	if err := m.st.DeleteMemory(ctx, p.auth.ProjectID, *a.Key); errors.Is(err, store.ErrNotFound) {
		return nil, errMemoryNotFound
	} else if err != nil {
		return nil, err
	}
	return map[string]any{"key": *a.Key, "deleted": true}, nil
}

type memoryListArgs struct {
	Prefix *string `json:"prefix" arg:"text"`
	Limit  *int    `json:"limit" arg:"limit"`
	Cursor *string `json:"cursor" arg:"cursor"`
}

func (m *memoryTools) list(ctx context.Context, p principal, a *memoryListArgs) (any, error) {
	limit, err := pageSize(a.Limit)
	if err != nil {
		return nil, err
	}
	prefix := deref(a.Prefix)
	if len(prefix) > 200 {
		return nil, invalidArgument("prefix must be at most 200 bytes")
	}
	after, err := m.pages.after("memory_list", p, a.Cursor)
	if err != nil {
		return nil, err
	}
	items, err := m.st.ListMemory(ctx, p.auth.ProjectID, prefix, after, limit)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"items": items}
	if len(items) > 0 {
		if next := m.pages.next("memory_list", p, len(items), limit, items[len(items)-1].Key); next != "" {
			out["next_cursor"] = next
		}
	}
	return out, nil
}

// noNUL refuses text with a NUL byte, which PostgreSQL text cannot store.
func noNUL(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return invalidArgument("text must not contain NUL characters")
		}
	}
	return nil
}
