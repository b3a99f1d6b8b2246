package web

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzDecodeObject feeds arbitrary tool arguments through the same two
// steps a tools/call takes (CheckJSON on the message, then DecodeObject
// into the tool's argument struct). It never panics; a decode that
// succeeds used exact key names only — every allowed key present in the
// object is set in the struct and every absent one is not, so "Source_ID"
// or "source_id\u0000" can never stand in for "source_id".
// Row IN-08 (docs/security-tests.md).
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{
		`{"source_id":"7b0c1c3e-9b1e-4a53-9d7e-0d7c7b4c0a11","start_byte":0,"max_bytes":10}`,
		`{"source_id":"x","cursor":"abc"}`, `{"Source_ID":"x"}`, `{"source_id":"a","source_id":"b"}`,
		`{"source_id\u0000":"x"}`, `{"start_byte":1.5}`, `{"max_bytes":9223372036854775808}`, `null`, `[]`, `"x"`, `{}`,
		`{"path":"../etc/passwd"}`,
	} {
		f.Add([]byte(s))
	}
	allowed := []string{"source_id", "start_byte", "max_bytes", "cursor"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if CheckJSON(raw) != nil {
			return // the envelope decoder refuses it first
		}
		var args struct {
			SourceID  *string `json:"source_id"`
			StartByte *int64  `json:"start_byte"`
			MaxBytes  *int64  `json:"max_bytes"`
			Cursor    *string `json:"cursor"`
		}
		if err := DecodeObject(raw, allowed, &args); err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			if len(raw) != 0 && string(raw) != "null" {
				t.Fatalf("accepted %q, which is not an object", raw)
			}
			return
		}
		for k := range m {
			if !slices.Contains(allowed, k) {
				t.Fatalf("accepted unknown key %q", k)
			}
		}
		set := map[string]bool{"source_id": args.SourceID != nil, "start_byte": args.StartByte != nil,
			"max_bytes": args.MaxBytes != nil, "cursor": args.Cursor != nil}
		for _, k := range allowed {
			v, present := m[k]
			if present && string(v) != "null" && !set[k] {
				t.Fatalf("%q present but not decoded in %q", k, raw)
			}
			if !present && set[k] {
				t.Fatalf("%q decoded from another key in %q", k, raw)
			}
		}
	})
}
