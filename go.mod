module github.com/wardenhq/warden

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/bluekeyes/go-gitdiff v0.9.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/google/shlex v0.0.0-20191202100458-e7afc7fbc510
	github.com/landlock-lsm/go-landlock v0.11.0
	github.com/sashabaranov/go-openai v1.43.0
	go.lsp.dev/jsonrpc2 v0.10.0
	go.lsp.dev/protocol v0.12.0
	go.lsp.dev/uri v0.3.0
	go.starlark.net v0.0.0-20260908191801-89a6a09411d5
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
	mvdan.cc/sh/v3 v3.14.1
)

require (
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.3.4 // indirect
	go.lsp.dev/pkg v0.0.0-20210717090340-384b27a52fb2 // indirect
	go.uber.org/atomic v1.9.0 // indirect
	go.uber.org/multierr v1.8.0 // indirect
	go.uber.org/zap v1.21.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.77 // indirect
)
