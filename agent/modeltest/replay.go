package modeltest

import (
	"embed"
	"strings"
)

// The replays are responses as real servers send them, written from each
// server's code, documentation and streams recorded in public bug reports:
//
//	ollama_parallel_index0.sse      Ollama 0.20: parallel calls, each whole, all at index 0
//	ollama_reasoning_answer.sse     Ollama: "reasoning" deltas before the answer
//	vllm_parallel_index0.sse        vLLM tool parsers: fragmented calls, the second reusing index 0 with a new id
//	vllm_error_chunk.sse            vLLM: {"object":"error",...} as a data chunk mid-stream
//	llamacpp_arguments_object.sse   llama.cpp (2026 builds): "arguments" as a JSON object
//	llamacpp_error_event.sse        llama.cpp: an "error:" event (context size exceeded)
//	llamacpp_plain_json.json        llama.cpp bindings: a plain chat.completion for a streaming request
//	llamacpp_plain_json_toolcall.json  the same, with a tool call
//	openrouter_finish_error.sse     OpenRouter: keep-alive comments, text, then finish_reason "error"
//	deepseek_reasoning_toolcall.sse DeepSeek thinking mode: reasoning_content, then a tool call
//	gemini3_thought_signature.sse   Gemini 3 OpenAI compatibility: extra_content.google.thought_signature
//	proxy_cut_text.sse              a proxy passing on an upstream drop: text, no finish_reason
//	proxy_cut_toolcall.sse          the same mid tool call, with a [DONE] the proxy added
//
//go:embed replays
var replays embed.FS

// Replay returns the turn that plays the named replay (a file name in
// replays/) byte for byte.
func Replay(name string) Turn {
	return Turn{Raw: ReplayText(name)}
}

// ReplayText returns the named replay's bytes, to combine with others (a
// run of keep-alive comments before a stream, for example). It panics on
// a name that is not there: a test's typo, not a condition.
func ReplayText(name string) string {
	data, err := replays.ReadFile("replays/" + name)
	if err != nil {
		panic("modeltest: no replay " + name)
	}
	return string(data)
}

// KeepAlive is n SSE comment lines, as servers send while a model loads or
// thinks before its first token.
func KeepAlive(n int) string {
	return strings.Repeat(": keep-alive\n\n", n)
}
