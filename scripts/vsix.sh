#!/usr/bin/env bash
# Packages the VS Code extension once per platform, each .vsix carrying the
# static warden binary built for it, as dist/warden-vscode-TARGET.vsix. VS Code
# installs only the one made for its own platform (vsce package --target), and
# the extension starts the binary inside itself (dist/bin/warden) with no
# setting to make.
#
#   scripts/vsix.sh TARGET...   linux-x64 linux-arm64 darwin-x64 darwin-arm64
#                               win32-x64 win32-arm64
#
# Node 24 must come first on PATH: make vsix sets it up (.ci/vscode-setup.sh
# --node-only) and calls this.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: scripts/vsix.sh TARGET... (linux-x64, darwin-arm64, win32-x64, ...)" >&2; exit 2; }

GO=${GO:-go}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
out=$PWD/dist
ext=editors/vscode
# Ignored by git with the rest of the extension's dist/; .vscodeignore packs it.
stage=$ext/dist/bin

# goos_goarch TARGET: Go's name for a VS Code target platform.
goos_goarch() {
	local os=${1%-*} arch=${1#*-}
	case $os in
	linux | darwin) ;;
	win32) os=windows ;;
	*) echo "vsix: unknown target $1 (want linux-, darwin- or win32- with x64 or arm64)" >&2; return 1 ;;
	esac
	case $arch in
	x64) arch=amd64 ;;
	arm64) ;;
	*) echo "vsix: unknown target $1 (want x64 or arm64)" >&2; return 1 ;;
	esac
	echo "$os $arch"
}

for target in "$@"; do goos_goarch "$target" >/dev/null; done

mkdir -p "$out"
(
	cd "$ext"
	npm ci --prefer-offline --no-audit --no-fund --loglevel=error
	npm run --silent typecheck
	npm run --silent build
)
trap 'rm -rf "$stage"' EXIT
for target in "$@"; do
	read -r goos goarch < <(goos_goarch "$target")
	exe=warden
	[ "$goos" = windows ] && exe=warden.exe
	rm -rf "$stage"
	mkdir -p "$stage"
	echo "vsix: $target (warden for $goos/$goarch)"
	CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch "$GO" build -trimpath \
		-ldflags "-s -w -X main.version=$version" -o "$stage/$exe" ./cmd/warden
	(cd "$ext" && node_modules/.bin/vsce package --target "$target" --no-dependencies \
		--skip-license --allow-missing-repository -o "$out/warden-vscode-$target.vsix" >/dev/null)
	echo "vsix: dist/warden-vscode-$target.vsix"
done
