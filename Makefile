# Warden's build. `make test` is what CI runs (through .ci/run).
GO       ?= go
BIN      := bin/warden
PREFIX   ?= $(HOME)/.local
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 10s

.PHONY: all build test test-deps test-start vet gotest nvim-test bench fuzz lint install clean vsix vscodetest vscode-e2e demo

# Suites that could not run here (a Debian package missing: make test-deps
# installs it); make test lists them at the end.
SKIPPED := $(CURDIR)/bin/skipped-suites
export WARDEN_SKIP_LOG := $(SKIPPED)

all: build

# A static binary: the sandbox helper re-executes it inside fresh namespaces,
# where no shared libraries may be reachable.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/warden

# Everything CI runs, on what this machine has. Each suite first checks what
# it needs (.ci/setup.sh): Go modules, Node 24 and code-server are fetched into
# caches; a missing Debian package is named with the command that installs it
# and its suite is skipped (a failure when WARDEN_REQUIRE_ALL=1, as in CI).
test: test-start build vet gotest nvim-test vscodetest
	@if [ -s $(SKIPPED) ]; then printf '\nmake test: what ran passed, but these were SKIPPED (make test-deps installs what they need):\n'; sed 's/^/  - /' $(SKIPPED); fi

# Installs, system-wide, the Debian packages every suite needs (as root or
# through password-less sudo), then Node 24 and code-server. .ci/run calls it
# before make test; make test itself never installs Debian packages.
test-deps:
	@for suite in go nvim vscode; do WARDEN_INSTALL_DEPS=1 .ci/setup.sh $$suite || exit 1; done

test-start:
	@mkdir -p bin && rm -f $(SKIPPED)

# Vets the code as built here, then cross-compiles and vets it for every
# platform the binary ships for (Windows builds without a sandbox: see
# docs/windows-sandbox.md). Warm, the five other targets take about 15 s.
CROSS := linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
vet:
	$(GO) vet ./...
	@for target in $(CROSS); do \
		echo "vet and build for $$target"; \
		GOOS=$${target%/*} GOARCH=$${target#*/} $(GO) vet ./... && \
		CGO_ENABLED=0 GOOS=$${target%/*} GOARCH=$${target#*/} $(GO) build -o /dev/null ./cmd/warden || exit 1; \
	done

# Every Go test against bin/warden, with HOME in a fresh directory that must
# stay free of Warden's files: no test may write the user's real
# ~/.config/warden, ~/.local/state/warden or ~/.cache/warden.
gotest: build
	@.ci/setup.sh go
	WARDEN_PNPM="$$(.ci/node-tools-setup.sh --print-path pnpm)" WARDEN_YARN="$$(.ci/node-tools-setup.sh --print-path yarn)" GO=$(GO) .ci/gotest.sh $(CURDIR)/$(BIN)

# The Neovim plugin's headless tests, in real Neovim against bin/warden.
nvim-test: build
	@.ci/setup.sh nvim; rc=$$?; [ $$rc = 0 ] || [ $$rc = 3 ] || exit $$rc; \
	if [ $$rc = 3 ]; then export WARDEN_NVIM_SYSTEM=skip; fi; \
	WARDEN_BIN=$(CURDIR)/$(BIN) editors/nvim/tests/matrix.sh

# The VS Code extension (editors/vscode). Node 24 and code-server come from
# .ci/vscode-setup.sh (through .ci/setup.sh vscode), which installs them into
# a cache outside the repo.
VSCODE_ENV := eval "$$(.ci/vscode-setup.sh --print-env)" && \
	if [ ! -x "$$WARDEN_NODE_BIN/node" ] || [ ! -x "$$WARDEN_CODE_SERVER" ]; then \
		echo "Node 24 or code-server missing: run .ci/setup.sh vscode (make test does)" >&2; exit 1; fi && \
	export PATH="$$WARDEN_NODE_BIN:$$PATH" && cd editors/vscode

# One .vsix per platform, each carrying its static warden binary:
# dist/warden-vscode-TARGET.vsix (scripts/vsix.sh). Node 24 is set up in the
# same cache as the tests'. The e2e test packages this machine's target only.
VSIX_TARGETS ?= linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64
VSIX_HOST    := $(shell uname -s | tr '[:upper:]' '[:lower:]')-$(shell uname -m | sed 's/^x86_64$$/x64/; s/^aarch64$$/arm64/')
VSIX         := dist/warden-vscode-$(VSIX_HOST).vsix

vsix:
	@.ci/vscode-setup.sh --node-only
	eval "$$(.ci/vscode-setup.sh --print-env)" && PATH="$$WARDEN_NODE_BIN:$$PATH" \
		GO=$(GO) VERSION=$(VERSION) scripts/vsix.sh $(VSIX_TARGETS)

# Unit tests of the extension's own logic, then the end-to-end test in a real
# VS Code (code-server + chromium). Screenshots land in editors/vscode/test-results/.
vscodetest: build
	@.ci/setup.sh vscode; rc=$$?; [ $$rc = 3 ] && exit 0; [ $$rc = 0 ] || exit $$rc; \
	$(MAKE) --no-print-directory vscode-e2e

vscode-e2e: build
	@$(MAKE) --no-print-directory vsix VSIX_TARGETS=$(VSIX_HOST)
	$(VSCODE_ENV) && npm run --silent test:unit && \
		WARDEN_BIN=$(CURDIR)/$(BIN) WARDEN_VSIX=$(CURDIR)/$(VSIX) WARDEN_CODE_SERVER="$$WARDEN_CODE_SERVER" \
		npm run --silent test:e2e

# Benchmarks: Go testing.B everywhere, plus whole-command comparisons.
bench: build
	WARDEN_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

# The main job, shown: a scripted tour of approvals through `warden exec` in
# a temporary workspace (no config, no model needed).
demo: build
	WARDEN_BIN=$(CURDIR)/$(BIN) scripts/demo.sh

# A short run of every fuzz target.
fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

install: build
	install -d $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/warden

clean:
	rm -rf bin dist
