package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"heyaira/server/internal/web"
)

// A tool's arguments are declared once, as the fields of one struct:
//
//	type memoryGetArgs struct {
//		Key *string `json:"key" arg:"memoryKey,required"`
//	}
//
// The json tag is the argument's name, the arg tag names its JSON Schema in
// argSchemas and whether the schema lists it as required. typed derives from
// that struct the accepted names, the inputSchema and the one decoding of
// the arguments (strict: exact names, no duplicates, no unknown member).
// A call whose arguments decode is then checked (checkArgs): a missing
// required argument is refused ("key is required"; "a and b are required"
// for arguments tagged requiredTogether, when any of them is missing), and
// so is one its schema's argChecks entry refuses, in field order.

// ToolArgs is what typed derives for one tool.
type ToolArgs struct {
	args     []toolArg // in field order
	required []string
	// decode decodes the arguments into a new value of the struct (a pointer).
	decode func(raw json.RawMessage) (any, error)
	// check refuses that value's missing or ill-formed arguments
	// (checkArgs), with the message of an invalid_argument.
	check func(a any) error
	// run calls the handler with that value.
	run func(ctx context.Context, p Principal, a any) (any, error)
}

type toolArg struct {
	name     string
	schema   map[string]any
	required string               // "", "required" or "requiredTogether"
	check    func(s string) error // argChecks[schema name], or nil
}

// Typed makes the toolArgs of a handler whose arguments are A.
func Typed[A any](handle func(ctx context.Context, p Principal, a *A) (any, error)) ToolArgs {
	ta, names := argsOf(reflect.TypeFor[A]())
	ta.decode = func(raw json.RawMessage) (any, error) {
		a := new(A)
		if err := web.DecodeObject(raw, names, a); err != nil {
			return nil, err
		}
		return a, nil
	}
	ta.check = func(a any) error { return checkArgs(ta.args, reflect.ValueOf(a).Elem()) }
	ta.run = func(ctx context.Context, p Principal, a any) (any, error) {
		return handle(ctx, p, a.(*A))
	}
	return ta
}

// checkArgs refuses, in field order, the first argument of v that is
// required and missing or that its schema's check refuses.
func checkArgs(args []toolArg, v reflect.Value) error {
	for i, a := range args {
		f := v.Field(i)
		missing := f.Kind() == reflect.Pointer && f.IsNil()
		switch {
		case missing && a.required == "requiredTogether":
			var together []string
			for _, b := range args {
				if b.required == a.required {
					together = append(together, b.name)
				}
			}
			last := len(together) - 1
			return errors.New(strings.Join(together[:last], ", ") + " and " + together[last] + " are required")
		case missing && a.required != "":
			return errors.New(a.name + " is required")
		case !missing && a.check != nil:
			if err := a.check(reflect.Indirect(f).String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// argsOf reads the fields of struct type t, and their argument names. A
// field without both tags, or naming a schema that does not exist, is a
// programming error: it panics when the tool table is built, which every test does.
func argsOf(t reflect.Type) (ta ToolArgs, names []string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		schemaName, opt, _ := strings.Cut(f.Tag.Get("arg"), ",")
		schema, ok := argSchemas[schemaName]
		if name == "" || !ok || (opt != "" && opt != "required" && opt != "requiredTogether") {
			panic(fmt.Sprintf("tool argument %s.%s: needs a json name and an arg tag naming a schema", t.Name(), f.Name))
		}
		ta.args = append(ta.args, toolArg{name: name, schema: schema, required: opt, check: argChecks[schemaName]})
		names = append(names, name)
		if opt != "" {
			ta.required = append(ta.required, name)
		}
	}
	return ta, names
}

// argChecks are the checks of string arguments beyond their presence, by
// schema name (RegisterArg).
var argChecks = map[string]func(s string) error{}

// Decode decodes raw into a new value of the tool's argument struct,
// strictly (exact keys, no unknown one).
func (ta ToolArgs) Decode(raw json.RawMessage) (any, error) { return ta.decode(raw) }

// Check refuses a decoded value's missing or ill-formed arguments, as the
// call does before the tool runs.
func (ta ToolArgs) Check(a any) error { return ta.check(a) }
