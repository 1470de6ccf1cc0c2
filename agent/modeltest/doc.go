// Package modeltest is a local HTTP server that speaks the OpenAI Chat
// Completions streaming protocol and plays scripted model turns: text,
// tool calls whose arguments arrive in fragments, HTTP errors and streams
// held open until the client goes away. Tests and benchmarks point the agent
// (or the warden binary, through OPENAI_BASE_URL) at it; it records every
// request so a test can check what the model really received.
package modeltest
