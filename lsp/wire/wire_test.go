package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// The typed client's protocol-typed params go through jsonrpc2's encoder;
// ProgressToken only marshals through a pointer, so check the wire.
func TestProtocolParamsMarshalOnTheWire(t *testing.T) {
	for name, tc := range map[string]struct {
		params any
		want   string
	}{
		"progress":        {&protocol.ProgressParams{Token: *protocol.NewProgressToken("tok"), Value: map[string]string{"kind": "end"}}, `"token":"tok"`},
		"numeric token":   {&protocol.ProgressParams{Token: *protocol.NewNumberProgressToken(7), Value: nil}, `"token":7`},
		"create progress": {&protocol.WorkDoneProgressCreateParams{Token: *protocol.NewProgressToken("c")}, `"token":"c"`},
		"0 percent":       {&ProgressParams{Token: json.RawMessage(`"t"`), Value: ProgressValue{Kind: "report", Percentage: Percent(0)}}, `"percentage":0`},
		"no focus":        {&ShowDocumentParams{URI: "file:///w/a.go"}, `"takeFocus":false`},
		"focus":           {&ShowDocumentParams{URI: "file:///w/a.go", TakeFocus: true}, `"takeFocus":true`},
	} {
		n, err := jsonrpc2.NewNotification("m", tc.params)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		data, err := json.Marshal(n)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(string(data), tc.want) {
			t.Errorf("%s: wire %s lacks %s", name, data, tc.want)
		}
	}
}

func TestIDKeys(t *testing.T) {
	for raw, want := range map[string]string{`5`: "#5", `5.0`: "#5", `"5"`: `"5"`, `"a b"`: `"a b"`} {
		got, ok := IDKey(json.RawMessage(raw))
		if !ok || got != want {
			t.Errorf("idKey(%s) = %q %v, want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{``, `1.5`, `{}`, `null`, `[1]`} {
		if _, ok := IDKey(json.RawMessage(raw)); ok {
			t.Errorf("idKey(%s) accepted", raw)
		}
	}
	// The server keys requests with jsonrpc2.ID formatted %q: the same keys.
	if got := fmtID(jsonrpc2.NewNumberID(5)); got != "#5" {
		t.Errorf("number id key %q", got)
	}
	if got := fmtID(jsonrpc2.NewStringID("5")); got != `"5"` {
		t.Errorf("string id key %q", got)
	}
}

func fmtID(id jsonrpc2.ID) string { return fmt.Sprintf("%q", id) }
