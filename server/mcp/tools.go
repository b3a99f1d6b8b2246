package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"time"

	"heyaira/server/internal/web"
	"heyaira/server/metrics"
)

// Tool is one MCP tool: its public definition, the scope it needs, and its
// typed arguments and handler (tool_args.go).
type Tool struct {
	Name        string
	Title       string
	Description string
	Scope       string
	ReadOnly    bool
	// destructive: the tool replaces or removes what is there (MCP's
	// destructiveHint), and calling it again with the same arguments changes
	// nothing more (idempotentHint). The other write tools only add.
	Destructive bool
	// Method: the tool is not listed or called as a tool, but answers the
	// JSON-RPC method of its Name (methods.go); TTL is how long, in
	// milliseconds, a modern-era client may keep its result.
	Method bool
	TTL    int
	ToolArgs
}

// NoArgs are the arguments of a tool that takes none.
type NoArgs struct{}

// ToolTable is built once and read-only afterwards.
type ToolTable struct {
	logger  *slog.Logger
	tools   []*Tool
	byName  map[string]*Tool
	methods map[string]*Tool
	limiter *web.RateLimiter
	metrics *metrics.Metrics
	now     func() time.Time
}

func NewToolTable(logger *slog.Logger, limiter *web.RateLimiter, metrics *metrics.Metrics, now func() time.Time, groups ...[]*Tool) *ToolTable {
	tt := &ToolTable{logger: logger, byName: map[string]*Tool{}, methods: map[string]*Tool{}, limiter: limiter, metrics: metrics, now: now}
	for _, g := range groups {
		for _, t := range g {
			if t.Method {
				tt.methods[t.Name] = t
				continue
			}
			tt.tools = append(tt.tools, t)
			tt.byName[t.Name] = t
		}
	}
	return tt
}

// callParamKeys are the tools/call params this server reads. inputResponses
// and requestState (2026-07-28, multi-round-trip requests) answer an
// InputRequiredResult, which no tool here ever returns: inputResponses is
// information the server does not recognize and ignores, as the revision
// asks; a requestState cannot be one this server issued, so it fails the
// integrity check the revision requires and is refused.
var callParamKeys = []string{"name", "arguments", "_meta", "task", "inputResponses", "requestState"}

// toolCall is a tools/call request, decoded once the bearer token has been
// checked.
type toolCall struct {
	t      *Tool
	args   any   // the decoded arguments (toolArgs.decode)
	argErr error // why they could not be decoded or were refused: answered after the scope check
}

// parseCall decodes tools/call params. Its errors are protocol errors
// (JSON-RPC -32602): unknown tool, params or arguments that are not an object.
func (tt *ToolTable) parseCall(params json.RawMessage) (toolCall, error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
		Task      json.RawMessage `json:"task"`
		Inputs    json.RawMessage `json:"inputResponses"` // ignored
		State     json.RawMessage `json:"requestState"`
	}
	if len(params) == 0 {
		return toolCall{}, &rpcError{CodeInvalidParams, "tools/call needs params"}
	}
	if err := web.DecodeObject(params, callParamKeys, &p); err != nil {
		return toolCall{}, &rpcError{CodeInvalidParams, "invalid tools/call params: " + err.Error()}
	}
	if len(p.State) > 0 && string(p.State) != "null" {
		return toolCall{}, &rpcError{CodeInvalidParams, "invalid tools/call params: requestState was not issued by this server"}
	}
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" && p.Arguments[0] != '{' {
		return toolCall{}, &rpcError{CodeInvalidParams, "tools/call arguments must be an object"}
	}
	t, ok := tt.byName[p.Name]
	if !ok {
		return toolCall{}, &rpcError{CodeInvalidParams, "unknown tool: " + web.Quote(p.Name)}
	}
	return t.callWith(p.Arguments), nil
}

// callWith decodes raw as t's arguments and checks them; a refusal is kept
// in argErr, answered after the scope check.
func (t *Tool) callWith(raw json.RawMessage) toolCall {
	args, err := t.decode(raw)
	if err == nil {
		err = t.check(args)
	}
	return toolCall{t: t, args: args, argErr: err}
}

// call runs a tools/call for who: the handler's result as a tool result,
// a failure as a tool result with isError; only a scope refusal is an error.
func (tt *ToolTable) call(ctx context.Context, who Principal, c toolCall) (*callToolResult, error) {
	result, failure, err := tt.serve(ctx, who, c)
	switch {
	case err != nil:
		return nil, err
	case failure != nil:
		return &callToolResult{IsError: true, Content: []textContent{{Type: "text", Text: failure["code"].(string) + ": " + failure["message"].(string)}},
			StructuredContent: map[string]any{"error": failure}}, nil
	}
	return toolResult(result)
}

// serve runs t for who. The scope check is an HTTP 403 before the tool
// runs (err, a *ScopeError), and the principal's limit comes before the tool
// touches the database (so a refused call writes no audit row); any other
// failure is its stable code, public message and fields (failure).
func (tt *ToolTable) serve(ctx context.Context, who Principal, c toolCall) (result any, failure map[string]any, err error) {
	t := c.t
	start := time.Now()
	code := "ok"
	defer func() {
		web.AddLog(ctx, slog.String("tool", t.Name), slog.String("code", code))
		tt.metrics.ToolCall(t.Name, code, time.Since(start))
	}()
	if t.Scope != "" && !who.HasScope(t.Scope) {
		code = "insufficient_scope"
		return nil, nil, who.Missing(t.Scope)
	}
	wait, ok := tt.limiter.Allow(who.Subject(), tt.now())
	switch {
	case !ok:
		err = RetryAfter("too many tool calls; retry later", wait)
	case c.argErr != nil:
		// The published inputSchema is authoritative: an argument it does not
		// name was refused when the call was decoded, whatever the handler
		// would do with it.
		err = InvalidArgument(c.argErr.Error())
	default:
		result, err = t.run(ctx, who, c.args)
		// A tool whose result would carry text read from GitHub refuses a
		// caller without documents:read (needDocuments) before it reads any.
		var se *ScopeError
		if errors.As(err, &se) {
			code = "insufficient_scope"
			return nil, nil, se
		}
	}
	if err == nil {
		return result, nil, nil
	}
	err = QuotaError(err)
	var public string
	code, public = Classify(err)
	switch code {
	case "internal", "store_unavailable":
		tt.logger.ErrorContext(ctx, "tool failed", "req_id", web.RequestID(ctx), "tool", t.Name, "code", code, "err", err)
		if code == "internal" {
			public += " (request " + web.RequestID(ctx) + ")"
		}
	case "provider_unavailable":
		// The github package's errors name a cause class, never a token,
		// a URL or content (github/errors.go).
		tt.logger.WarnContext(ctx, "github unavailable", "req_id", web.RequestID(ctx), "tool", t.Name, "cause", err.Error())
		public += " (request " + web.RequestID(ctx) + ")"
	}
	failure = map[string]any{"code": code, "message": public}
	var fe *FieldsError
	if errors.As(err, &fe) {
		maps.Copy(failure, fe.Fields())
	}
	return nil, failure, nil
}

// callToolResult is the MCP CallToolResult. Optional fields are omitted, never null.
type callToolResult struct {
	ResultType        string        `json:"resultType,omitempty"` // "complete" in the modern era (modern.go)
	Content           []textContent `json:"content"`
	StructuredContent any           `json:"structuredContent,omitempty"`
	IsError           bool          `json:"isError,omitempty"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// toolResult returns v as structuredContent and as one text block holding the
// same JSON, encoded once here; the envelope copies it.
func toolResult(v any) (*callToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &callToolResult{Content: []textContent{{Type: "text", Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}
