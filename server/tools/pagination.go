package tools

import (
	"time"

	"heyaira/cursor"
	"heyaira/server/mcp"
)

const (
	defaultPageSize  = 50
	maxPageSize      = 200
	listCursorExpiry = time.Hour
	// maxPageBytes bounds the text of one page: 200 task bodies of 64 KiB
	// would be 12.5 MiB, sent twice (structuredContent and the text block)
	// and escaped, one answer of over 100 MiB.
	MaxPageBytes = 256 << 10
)

// pager signs and checks the cursors of list tools.
type pager struct {
	cursors *cursor.Codec
	now     func() time.Time
}

// listPage answers a list tool: the page after the cursor argument (list reads
// it), under field, and next_cursor when the page is full. key is the
// cursor's key of an item, and size, when not nil, its bytes of text: a page
// ends early, with next_cursor, once its items pass maxPageBytes. A list
// cursor is bound to the tool (kind), the project and the caller, and
// carries the last key seen.
func listPage[T any](pg pager, kind string, p mcp.Principal, cur *string, limit int, field string,
	list func(after string) ([]T, error), key func(T) string, size func(T) int) (any, error) {
	var after string
	if cur != nil {
		c, err := pg.cursors.Decode(*cur, pg.now())
		if err != nil {
			return nil, err
		}
		if c.Kind != kind || c.Project != p.Auth.ProjectID || c.Principal != p.Subject() {
			return nil, cursor.ErrInvalid
		}
		after = c.Path
	}
	items, err := list(after)
	if err != nil {
		return nil, err
	}
	more := len(items) > 0 && len(items) >= limit
	if size != nil {
		total := 0
		for i, it := range items {
			if total += size(it); total > MaxPageBytes && i > 0 {
				items, more = items[:i], true
				break
			}
		}
	}
	out := map[string]any{field: items}
	if more {
		out["next_cursor"] = pg.cursors.Encode(cursor.Cursor{
			Kind: kind, Project: p.Auth.ProjectID, Principal: p.Subject(), Path: key(items[len(items)-1]),
			Expires: pg.now().Add(listCursorExpiry),
		})
	}
	return out, nil
}

// pageSize validates an optional limit argument.
func pageSize(limit *int) (int, error) {
	if limit == nil {
		return defaultPageSize, nil
	}
	if *limit < 1 || *limit > maxPageSize {
		return 0, mcp.InvalidArgument("limit must be between 1 and 200")
	}
	return *limit, nil
}
