package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/wardenhq/warden/agent"
	"github.com/wardenhq/warden/config"
)

// doctorConfig says whether config.toml loads.
type doctorConfig struct {
	File string `json:"file"`
	// Exists is false when there is no config.toml: the defaults apply.
	Exists bool   `json:"exists"`
	Error  string `json:"error,omitempty"`
	// Settings are those not at their default, each with where it came
	// from (config.toml or the environment).
	Settings []config.Setting `json:"settings"`
}

// doctorModel is the model the agent would use, and what one real request
// to it answered.
type doctorModel struct {
	Configured bool   `json:"configured"`
	Name       string `json:"name,omitempty"`
	BaseURL    string `json:"base_url,omitempty"`
	// Missing says what to set when nothing is configured.
	Missing string `json:"missing,omitempty"`
	// Check is the answer to GET /models (agent.Client.Check).
	Check *agent.Check `json:"check,omitempty"`
}

// modelReport loads the config as the agent would (a broken file still
// lets the environment's model through) and asks the endpoint once.
func modelReport(ctx context.Context) (doctorConfig, doctorModel) {
	cfgRep := doctorConfig{File: config.File()}
	_, statErr := os.Stat(cfgRep.File)
	cfgRep.Exists = !errors.Is(statErr, fs.ErrNotExist)
	cfg, err := config.Load(cfgRep.File)
	if err != nil {
		cfgRep.Error = err.Error()
	}
	cfgRep.Settings = cfg.NonDefault()
	if cfgRep.Settings == nil {
		cfgRep.Settings = []config.Setting{}
	}
	m := doctorModel{Configured: cfg.Model.Configured(), Name: cfg.Model.Name, BaseURL: cfg.Model.BaseURL}
	client, err := agent.NewClientFor(cfg)
	var none *agent.NoModelError
	switch {
	case errors.As(err, &none):
		m.Missing = none.Terminal().Error()
	case err != nil:
		m.Check = &agent.Check{Status: "error", Detail: err.Error()}
	default:
		c := client.Check(ctx)
		m.Check = &c
	}
	return cfgRep, m
}

func printModel(w io.Writer, c doctorConfig, m doctorModel) {
	switch {
	case c.Error != "":
		fmt.Fprintf(w, "\nconfig: NOT loaded, so none of it applies (the strictest approval policy in the editor): %s\n", c.Error)
	case !c.Exists:
		fmt.Fprintf(w, "\nconfig: no config.toml (%s): defaults\n", c.File)
	default:
		fmt.Fprintf(w, "\nconfig: %s\n", c.File)
	}
	for _, s := range c.Settings {
		fmt.Fprintf(w, "  - %s = %s (from %s)\n", s.Key, s.Value, s.Origin)
	}
	switch {
	case !m.Configured:
		fmt.Fprintf(w, "model: %s\n", m.Missing)
		return
	case m.BaseURL != "":
		fmt.Fprintf(w, "model: %s at %s\n", m.Name, m.BaseURL)
	default:
		fmt.Fprintf(w, "model: %s\n", m.Name)
	}
	switch ch := m.Check; {
	case ch == nil:
	case ch.Status == "ok" && !ch.Listed:
		fmt.Fprintf(w, "  - the endpoint answers; its list of %d models does not name %q\n", ch.Models, m.Name)
	case ch.Status == "ok":
		fmt.Fprintln(w, "  - the endpoint answers and lists the model")
	default:
		fmt.Fprintf(w, "  - %s: %s\n", ch.Status, ch.Detail)
	}
}
