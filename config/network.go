package config

import (
	"encoding/json"
	"fmt"
	"strings"
)

// NetworkAccess is network_access: "off", "ask" (through Warden's proxy,
// asked per host) or "on"; true and false are read as on and off. Empty
// means the sandbox mode's default (the sandbox package decides it).
type NetworkAccess string

const (
	NetworkOff NetworkAccess = "off"
	NetworkAsk NetworkAccess = "ask"
	NetworkOn  NetworkAccess = "on"
)

// ParseNetworkAccess reads a network_access value written as a word.
func ParseNetworkAccess(s string) (NetworkAccess, error) { return parseNetwork("network_access", s) }

// parseNetwork reads the value of key (network_access in config.toml,
// networkAccess in the editor's settings).
func parseNetwork(key, s string) (NetworkAccess, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "off", "false":
		return NetworkOff, nil
	case "on", "true":
		return NetworkOn, nil
	case "ask", "":
		return NetworkAccess(v), nil
	}
	return "", fmt.Errorf("%s %q: want \"off\", \"ask\" or \"on\" (true and false mean on and off)", key, s)
}

func networkFromValue(key string, v any) (NetworkAccess, error) {
	switch v := v.(type) {
	case bool:
		if v {
			return NetworkOn, nil
		}
		return NetworkOff, nil
	case string:
		return parseNetwork(key, v)
	}
	return "", fmt.Errorf("%s %v: want \"off\", \"ask\" or \"on\" (true and false mean on and off)", key, v)
}

// UnmarshalTOML accepts a boolean or a word.
func (n *NetworkAccess) UnmarshalTOML(v any) error {
	m, err := networkFromValue("network_access", v)
	if err != nil {
		return err
	}
	*n = m
	return nil
}

// UnmarshalJSON accepts a boolean or a word (the editor's networkAccess).
func (n *NetworkAccess) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	m, err := networkFromValue("networkAccess", v)
	if err != nil {
		return err
	}
	*n = m
	return nil
}

// Or returns n, or d when n is empty.
func (n NetworkAccess) Or(d NetworkAccess) NetworkAccess {
	if n == "" {
		return d
	}
	return n
}
