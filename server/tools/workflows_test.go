package tools

import (
	"testing"

	"heyaira/server/catalog"
	"heyaira/server/mcp"
)

// TestBudgetExceededCarriesFields: a dispatch over the budget carries the
// sizes as fields too, which the tool table merges into
// structuredContent.error (TestWorkflowDispatchBudgetExceeded runs it).
func TestBudgetExceededCarriesFields(t *testing.T) {
	t.Parallel()
	fe := budgetExceeded(&catalog.BudgetError{Limit: 61440, Total: 61441}).(*mcp.FieldsError)
	if fe.Fields()["total_bytes"] != 61441 || fe.Code() != "catalog_budget_exceeded" {
		t.Errorf("fields = %v", fe.Fields())
	}
}
