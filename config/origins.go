package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Origin says where a setting's effective value came from. A setting with
// no origin has its default.
type Origin string

const (
	// FromFile is config.toml.
	FromFile Origin = "config.toml"
	// FromEditor is the editor's settings (LSP initializationOptions or
	// workspace/didChangeConfiguration).
	FromEditor Origin = "editor settings"
	// FromPolicySet is the editor's warden.policy.set, for the session.
	FromPolicySet Origin = "warden.policy.set"
)

// FromEnv is the environment variable name.
func FromEnv(name string) Origin { return Origin("environment " + name) }

// Origins maps a setting's TOML key (model.base_url) to where its value
// came from. A key that is absent has its default. It is so that a hint
// names the place to change a value: the editor's settings when the editor
// sent it, not config.toml.
type Origins map[string]Origin

// Of is the origin of key, or "" for its default.
func (o Origins) Of(key string) Origin { return o[key] }

// Sorted lists the keys that are not at their default, in order.
func (o Origins) Sorted() []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Where says, for a message, where to change key: "model.apiKey in the
// editor's settings", "OPENAI_API_KEY in the environment", "[model] api_key
// in FILE". fallback is said for a key at its default (where to set it).
func (o Origins) Where(key, fallback string) string {
	switch origin := o[key]; {
	case origin == FromEditor:
		return fmt.Sprintf("%s in the editor's settings", JSONKey(key))
	case origin == FromPolicySet:
		return "the policy set in the editor for this session (warden.policy.set)"
	case origin == FromFile:
		return fmt.Sprintf("%s in %s", tomlPlace(key), File())
	case strings.HasPrefix(string(origin), "environment "):
		return strings.TrimPrefix(string(origin), "environment ") + " in the environment"
	}
	return fallback
}

// tomlPlace is "[model] api_key" for model.api_key, the key itself at the top.
func tomlPlace(key string) string {
	if table, name, ok := strings.Cut(key, "."); ok {
		return fmt.Sprintf("[%s] %s", table, name)
	}
	return key
}

// SetOrigin records that key's value came from origin, on a copy of the
// map: copies of a Config share it.
func (c *Config) SetOrigin(key string, origin Origin) {
	c.Origins = c.Origins.clone()
	c.Origins[key] = origin
}

func (o Origins) clone() Origins {
	if o == nil {
		return Origins{}
	}
	return maps.Clone(o)
}

// setting is one leaf of Config: its TOML key, its JSON key and where it is.
type setting struct {
	toml, json string
	index      []int
}

// settings lists Config's leaves (Model's fields one by one).
var settings = leaves(reflect.TypeFor[Config](), "", "", nil)

func leaves(t reflect.Type, tomlPrefix, jsonPrefix string, index []int) []setting {
	var out []setting
	for i := range t.NumField() {
		f := t.Field(i)
		tk, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		jk, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || tk == "-" || tk == "" {
			continue
		}
		idx := append(append([]int(nil), index...), i)
		if f.Type.Kind() == reflect.Struct && !reflect.PointerTo(f.Type).Implements(reflect.TypeFor[json.Unmarshaler]()) {
			out = append(out, leaves(f.Type, tomlPrefix+tk+".", jsonPrefix+jk+".", idx)...)
			continue
		}
		out = append(out, setting{tomlPrefix + tk, jsonPrefix + jk, idx})
	}
	return out
}

// JSONKey is the editor's name (model.baseURL) for a TOML key (model.base_url).
func JSONKey(key string) string {
	for _, s := range settings {
		if s.toml == key {
			return s.json
		}
	}
	return key
}

// markEditor records that the editor set every setting present in obj, the
// settings object as MergeJSON applies it (unknown keys already dropped).
func (o Origins) markEditor(obj map[string]json.RawMessage) {
	for _, s := range settings {
		if jsonPresent(obj, s.json) {
			o[s.toml] = FromEditor
		}
	}
}

// jsonPresent says whether the dotted key is set in obj, matching names
// without case as encoding/json does.
func jsonPresent(obj map[string]json.RawMessage, key string) bool {
	head, rest, nested := strings.Cut(key, ".")
	for k, v := range obj {
		if !strings.EqualFold(k, head) {
			continue
		}
		if !nested {
			return true
		}
		var inner map[string]json.RawMessage
		return json.Unmarshal(v, &inner) == nil && jsonPresent(inner, rest)
	}
	return false
}

// ApplyChanged sets each setting that differs between prev and next (two
// loads of config.toml) to next's value and origin, leaving the others as
// they are: a reload of the file keeps what the editor sent for other keys.
func (c *Config) ApplyChanged(prev, next Config) {
	dst, p, n := reflect.ValueOf(c).Elem(), reflect.ValueOf(prev), reflect.ValueOf(next)
	c.Origins = c.Origins.clone()
	for _, s := range settings {
		pv, nv := p.FieldByIndex(s.index), n.FieldByIndex(s.index)
		if reflect.DeepEqual(pv.Interface(), nv.Interface()) {
			continue
		}
		dst.FieldByIndex(s.index).Set(nv)
		if origin, ok := next.Origins[s.toml]; ok {
			c.Origins[s.toml] = origin
		} else {
			delete(c.Origins, s.toml)
		}
	}
}

// fileOrigins marks the settings config.toml defines.
func fileOrigins(md toml.MetaData) Origins {
	o := Origins{}
	for _, s := range settings {
		if md.IsDefined(strings.Split(s.toml, ".")...) {
			o[s.toml] = FromFile
		}
	}
	return o
}

// Setting is one setting that is not at its default: its TOML key, its
// value as text (an API key is never shown) and where it came from.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Origin Origin `json:"origin"`
}

// NonDefault lists the settings c has from somewhere other than the
// defaults, in the order of Config's fields.
func (c Config) NonDefault() []Setting {
	v := reflect.ValueOf(c)
	var out []Setting
	for _, s := range settings {
		origin, ok := c.Origins[s.toml]
		if !ok {
			continue
		}
		out = append(out, Setting{Key: s.toml, Value: display(s.toml, v.FieldByIndex(s.index)), Origin: origin})
	}
	return out
}

// display is a setting's value for a report; secrets say only whether set.
func display(key string, v reflect.Value) string {
	if key == "model.api_key" {
		if v.String() == "" {
			return "(empty)"
		}
		return "(set, not shown)"
	}
	if s, ok := v.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	if v.Kind() == reflect.String {
		return fmt.Sprintf("%q", v.String())
	}
	if b, err := json.Marshal(v.Interface()); err == nil {
		return string(b)
	}
	return fmt.Sprint(v.Interface())
}
