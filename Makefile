# Warden's build. `make test` is what CI runs (through .ci/run).
GO       ?= go
BIN      := bin/warden
PREFIX   ?= $(HOME)/.local
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 10s

.PHONY: all build test vet gotest nvim-test bench fuzz lint install clean

all: build

# A static binary: the sandbox helper re-executes it inside fresh namespaces,
# where no shared libraries may be reachable.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/warden

test: build vet gotest nvim-test

vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...

gotest: build
	WARDEN_BIN=$(CURDIR)/$(BIN) $(GO) test -race -count=1 ./...

# The Neovim plugin's headless tests, in real Neovim against bin/warden.
nvim-test: build
	WARDEN_BIN=$(CURDIR)/$(BIN) editors/nvim/tests/run.sh

# Benchmarks: Go testing.B everywhere, plus whole-command comparisons.
bench: build
	WARDEN_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

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
