package lsp

import "strings"

// messagePrefix starts every message, dialog and progress title Warden
// shows, in every client, so the user tells Warden's words from the
// editor's and other servers' at a glance.
const messagePrefix = "Warden: "

// withPrefix puts messagePrefix before msg, once: a message already
// composed with it (or with a lower-case "warden: ") is not prefixed again.
func withPrefix(msg string) string {
	switch {
	case strings.HasPrefix(msg, messagePrefix):
		return msg
	case strings.HasPrefix(msg, "warden: "):
		return messagePrefix + msg[len("warden: "):]
	}
	return messagePrefix + msg
}
