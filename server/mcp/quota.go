package mcp

import (
	"errors"
	"fmt"

	"heyaira/store"
)

// QuotaError turns the store's refusal of a write over a project quota
// (store/limits.go) into the tool error quota_exceeded, naming the quota
// and its limit, in the message and as fields. Other errors pass unchanged.
func QuotaError(err error) error {
	var qe *store.QuotaError
	if !errors.As(err, &qe) {
		return err
	}
	msg := fmt.Sprintf("the project's %s quota (%d) is reached; delete something or ask an administrator", qe.Quota, qe.Limit)
	return &FieldsError{err: &CodedError{"quota_exceeded", msg}, fields: map[string]any{"quota": qe.Quota, "limit": qe.Limit}}
}
