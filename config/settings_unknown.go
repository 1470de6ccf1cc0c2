package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// UnknownSettingsError names the editor settings Warden does not know, each
// with the closest key it does. MergeJSON applied the others: one misspelt
// key (model.base_url) must not drop every setting.
type UnknownSettingsError struct {
	Keys []string
}

func (e *UnknownSettingsError) Error() string {
	word := "key"
	if len(e.Keys) > 1 {
		word = "keys"
	}
	return fmt.Sprintf("unknown %s %s ignored; the other settings apply", word, strings.Join(e.Keys, ", "))
}

// dropUnknown removes from obj the keys no JSON field of t takes (matched
// as encoding/json does, ignoring case), in nested objects too, and names
// each with the closest known key. A map field (model.extra) takes any key.
func dropUnknown(obj map[string]json.RawMessage, t reflect.Type, prefix string) []string {
	fields := jsonFields(t)
	var dropped []string
	for key, val := range obj {
		f, ok := fieldFor(fields, key)
		if !ok {
			delete(obj, key)
			dropped = append(dropped, fmt.Sprintf("%q%s", prefix+key, closestKey(fields, key, prefix)))
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var inner map[string]json.RawMessage
		if ft.Kind() != reflect.Struct || reflect.PointerTo(ft).Implements(reflect.TypeFor[json.Unmarshaler]()) || json.Unmarshal(val, &inner) != nil {
			continue
		}
		if d := dropUnknown(inner, ft, prefix+f.Name+"."); len(d) > 0 {
			dropped = append(dropped, d...)
			obj[key], _ = json.Marshal(inner)
		}
	}
	sort.Strings(dropped)
	return dropped
}

type jsonField struct {
	Name string
	Type reflect.Type
}

// jsonFields lists t's fields by their JSON names.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name, f.Type})
	}
	return out
}

func fieldFor(fields []jsonField, key string) (jsonField, bool) {
	for _, f := range fields {
		if strings.EqualFold(f.Name, key) {
			return f, true
		}
	}
	return jsonField{}, false
}

// closestKey says " (did you mean "model.baseURL"?)" for the known key
// nearest to key, ignoring case and separators, or "" when none is near.
func closestKey(fields []jsonField, key, prefix string) string {
	best, bestDist := "", len(key)/2+1
	for _, f := range fields {
		if d := editDistance(squash(key), squash(f.Name)); d < bestDist {
			best, bestDist = f.Name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", prefix+best)
}

// squash lowercases a key and drops its separators: base_url, base-url
// and baseURL are one.
func squash(s string) string {
	return strings.NewReplacer("_", "", "-", "", ".", "").Replace(strings.ToLower(s))
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
