package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/jsonrpc2"
)

// InvalidParams returns a JSON-RPC InvalidParams error. Command and code
// action code returns it to say which argument is wrong.
func InvalidParams(format string, a ...any) error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, format, a...)
}

// decodeParams decodes a request's params into v. A malformed value becomes an
// InvalidParams error that names the field (prefix is "params").
func decodeParams(raw json.RawMessage, v any) error {
	return decodeNamed("params", raw, v)
}

// DecodeArg decodes executeCommand argument i into v; a missing or malformed
// argument is an InvalidParams error naming it (arguments[i].field).
func DecodeArg(args []json.RawMessage, i int, v any) error {
	name := fmt.Sprintf("arguments[%d]", i)
	if i >= len(args) {
		return InvalidParams("%s is missing (the command got %d arguments)", name, len(args))
	}
	return decodeNamed(name, args[i], v)
}

func decodeNamed(name string, raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return InvalidParams("%s is missing", name)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return InvalidParams("%s", describeJSONError(name, err))
	}
	return nil
}

// describeJSONError turns a decoding error into "params.textDocument.version:
// want int32, got string".
func describeJSONError(name string, err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := name
		if typeErr.Field != "" {
			field += "." + typeErr.Field
		}
		return fmt.Sprintf("%s: want %s, got %s", field, typeName(typeErr.Type.String()), typeErr.Value)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Sprintf("%s: malformed JSON at byte %d: %v", name, syntaxErr.Offset, err)
	}
	return fmt.Sprintf("%s: %v", name, strings.TrimPrefix(err.Error(), "json: "))
}

func typeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		if strings.HasSuffix(t, "URI") {
			return "a string"
		}
		if strings.HasSuffix(t, "Kind") {
			return "a string"
		}
		return "an object"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number (" + t + ")"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	}
	return t
}

// required returns an InvalidParams error naming the first empty field.
// Pass pairs of (name, empty) checks.
func required(checks ...fieldCheck) error {
	for _, c := range checks {
		if c.missing {
			return InvalidParams("%s is required", c.name)
		}
	}
	return nil
}

type fieldCheck struct {
	name    string
	missing bool
}

func need(name string, missing bool) fieldCheck { return fieldCheck{name, missing} }
