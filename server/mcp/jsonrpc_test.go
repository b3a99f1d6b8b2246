package mcp

import (
	"strings"
	"testing"
)

// Row IN-08 (docs/security-tests.md).
func TestParseMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     string
		wantCode int // 0: accepted
		wantID   string
		notify   bool
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "1", false},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, 0, `"a"`, false},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, "", true},
		{"response from client", `{"jsonrpc":"2.0","id":7,"result":{}}`, 0, "7", true},
		{"array (batch)", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, "", false},
		{"not json", `{"jsonrpc":`, CodeParseError, "", false},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, CodeInvalidRequest, "", false},
		{"duplicate key", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, CodeInvalidRequest, "", false},
		{"nested duplicate key", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}`, CodeInvalidRequest, "", false},
		{"case-folded key", `{"jsonrpc":"2.0","id":1,"Method":"ping"}`, CodeInvalidRequest, "1", false},
		{"unknown key", `{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}`, CodeInvalidRequest, "1", false},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, CodeInvalidRequest, "1", false},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, "", false},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest, "", false},
		{"non-string method", `{"jsonrpc":"2.0","id":1,"method":5}`, CodeInvalidRequest, "1", false},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`, CodeInvalidRequest, "1", false},
		{"tools/call array params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`, CodeInvalidParams, "1", false},
		{"tools/call string params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"memory_get"}`, CodeInvalidParams, "1", false},
		{"tools/call null params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, CodeInvalidParams, "1", false},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`, CodeInvalidRequest, "", false},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, CodeInvalidRequest, "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := parseMessage([]byte(tt.body))
			gotCode := 0
			if err != nil {
				gotCode = err.Code
			}
			if gotCode != tt.wantCode {
				t.Fatalf("code = %d, want %d (err %v)", gotCode, tt.wantCode, err)
			}
			if string(m.ID) != tt.wantID {
				t.Errorf("id = %s, want %s", m.ID, tt.wantID)
			}
			if err == nil && (m.ID == nil || m.IsResponse) != tt.notify {
				t.Errorf("needs no answer = %v, want %v", m.ID == nil || m.IsResponse, tt.notify)
			}
		})
	}
}

// Row IN-08 (docs/security-tests.md).
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"git_document_get","arguments":{"source_id":"x"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[1]`, `{"a":1,"a":1}`, `{"jsonrpc":"2.0","id":"x","result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := parseMessage(body)
		if err != nil {
			return
		}
		if !m.IsResponse && m.Method == "" {
			t.Fatalf("accepted a request without a method: %q", body)
		}
		if m.ID != nil && !isIDValue(m.ID) {
			t.Fatalf("accepted id %q", m.ID)
		}
	})
}

func BenchmarkParseMessage(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"git_document_get",` +
		`"arguments":{"source_id":"7b0c1c3e-9b1e-4a53-9d7e-0d7c7b4c0a11","cursor":"` + strings.Repeat("A", 200) + `"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseMessage(body); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseBearer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER a-b.c_d~e+f/g==", "a-b.c_d~e+f/g==", true},
		{"Bearer  abc", "abc", true},
		{"Basic abc", "", false},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Bearer a b", "", false},
		{"Bearer ===", "", false},
		{"Bearer a\x00", "", false},
		{"Bearer " + strings.Repeat("a", 513), "", false},
	}
	for _, tt := range tests {
		got, ok := parseBearer(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseBearer(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseBearer(f *testing.F) {
	f.Add("Bearer abc")
	f.Add("bearer a=")
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := parseBearer(h)
		if ok && (tok == "" || len(tok) > maxBearerLen || strings.ContainsAny(tok, " \t\r\n")) {
			t.Fatalf("parseBearer(%q) accepted %q", h, tok)
		}
	})
}
