package server

import (
	"time"

	"heyaira/cursor"
)

const (
	defaultPageSize  = 50
	maxPageSize      = 200
	listCursorExpiry = time.Hour
)

// pager signs and checks the cursors of list tools. A list cursor is bound to
// the tool (kind), the project and the caller, and carries the last key seen.
type pager struct {
	cursors *cursor.Codec
	now     func() time.Time
}

// after returns the key to continue after, from an optional cursor argument.
func (pg pager) after(kind string, p principal, c *string) (string, error) {
	if c == nil {
		return "", nil
	}
	cur, err := pg.cursors.Decode(*c, pg.now())
	if err != nil {
		return "", err
	}
	if cur.Kind != kind || cur.Project != p.auth.ProjectID || cur.Principal != p.subject() {
		return "", cursor.ErrInvalid
	}
	return cur.Path, nil
}

// next returns the cursor for the page after last, or "" when the page was not full.
func (pg pager) next(kind string, p principal, n, limit int, last string) string {
	if n < limit {
		return ""
	}
	return pg.cursors.Encode(cursor.Cursor{
		Kind: kind, Project: p.auth.ProjectID, Principal: p.subject(), Path: last,
		Expires: pg.now().Add(listCursorExpiry),
	})
}

// listPage answers a list tool: the page after the cursor argument (list reads
// it), under field, and next_cursor when the page is full. key is the
// cursor's key of an item.
func listPage[T any](pg pager, kind string, p principal, cur *string, limit int, field string,
	list func(after string) ([]T, error), key func(T) string) (any, error) {
	after, err := pg.after(kind, p, cur)
	if err != nil {
		return nil, err
	}
	items, err := list(after)
	if err != nil {
		return nil, err
	}
	out := map[string]any{field: items}
	if len(items) > 0 {
		if next := pg.next(kind, p, len(items), limit, key(items[len(items)-1])); next != "" {
			out["next_cursor"] = next
		}
	}
	return out, nil
}

// pageSize validates an optional limit argument.
func pageSize(limit *int) (int, error) {
	if limit == nil {
		return defaultPageSize, nil
	}
	if *limit < 1 || *limit > maxPageSize {
		return 0, invalidArgument("limit must be between 1 and 200")
	}
	return *limit, nil
}
