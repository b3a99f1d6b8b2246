package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
)

// writeJSON is the one place that writes a JSON response. Headers are set
// before WriteHeader, or they would be lost.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b)
}

// maxJSONDepth bounds nesting, so a deeply nested body cannot exhaust the stack.
const maxJSONDepth = 64

var (
	errDuplicateKey = errors.New("duplicate object key")
	errTrailingData = errors.New("trailing data after JSON value")
	errTooDeep      = errors.New("JSON nested too deeply")
)

// checkJSON reports whether data is exactly one JSON value with no duplicate
// key in any object and bounded nesting. encoding/json alone keeps the last of
// two duplicate keys, which lets two parsers read one message differently.
func checkJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkValue(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errTrailingData
	}
	return nil
}

func walkValue(dec *json.Decoder, depth int) error {
	if depth > maxJSONDepth {
		return errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			if seen[key] {
				return fmt.Errorf("%w %q", errDuplicateKey, key)
			}
			seen[key] = true
			if err := walkValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}

// decodeObject decodes raw (already checked by checkJSON) into dst, which must
// be a pointer to a struct whose json tags name exactly the allowed keys. Keys
// are compared exactly, because encoding/json would also accept "Source_ID".
// An absent or null raw decodes as an empty object.
func decodeObject(raw json.RawMessage, allowed []string, dst any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return errors.New("must be a JSON object")
	}
	for k := range keys {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("unknown field %q", k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("field %q has the wrong type", te.Field)
		}
		return errors.New("malformed object")
	}
	return nil
}
