package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// maxJSONDepth bounds nesting, so a deeply nested body cannot exhaust the stack.
const maxJSONDepth = 64

var (
	ErrDuplicateKey = errors.New("duplicate object key")
	ErrTrailingData = errors.New("trailing data after JSON value")
	ErrTooDeep      = errors.New("JSON nested too deeply")
)

// CheckJSON reports whether data is exactly one JSON value with no duplicate
// key in any object and bounded nesting. encoding/json alone keeps the last of
// two duplicate keys, which lets two parsers read one message differently.
func CheckJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walkValue(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ErrTrailingData
	}
	return nil
}

func walkValue(dec *json.Decoder, depth int) error {
	if depth > maxJSONDepth {
		return ErrTooDeep
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
				return fmt.Errorf("%w %s", ErrDuplicateKey, Quote(key))
			}
			seen[key] = true
			if err := walkValue(dec, depth+1); err != nil {
				return err
			}
		}
	case json.Delim('['):
		for dec.More() {
			if err := walkValue(dec, depth+1); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	_, err = dec.Token() // the closing '}' or ']'
	return err
}

// DecodeObject decodes raw (already checked by CheckJSON) into dst, which must
// be a pointer to a struct whose json tags name exactly the allowed keys. Keys
// are compared exactly, because encoding/json would also accept "Source_ID".
// An absent or null raw decodes as an empty object.
func DecodeObject(raw json.RawMessage, allowed []string, dst any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return errors.New("must be a JSON object")
	}
	for k := range keys {
		if !slices.Contains(allowed, k) {
			// The expected names, so that a caller who guessed ("value" for
			// memory_put's "content") can correct itself from the message.
			return fmt.Errorf("unknown field %s; the fields are %s", Quote(k), strings.Join(allowed, ", "))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("field %q has the wrong type: it must be %s", te.Field, jsonKind(te.Type))
		}
		return errors.New("malformed object")
	}
	return nil
}

// jsonKind names the JSON type that decodes into t, for a message.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// Quote is s as a JSON string for an error message, cut to MaxQuoted bytes
// (at a character boundary, with "…"): the name echoed back is the caller's,
// and without the cut a 1 MiB key came back as 7 MiB of escapes.
func Quote(s string) string {
	if len(s) > MaxQuoted {
		s = CutUTF8(s, MaxQuoted) + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// MaxQuoted bounds a name echoed in an error.
const MaxQuoted = 64
