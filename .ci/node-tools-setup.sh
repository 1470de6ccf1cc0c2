#!/usr/bin/env bash
# Installs pnpm for the Go tests of layered toolchain caches
# (TestCacheLayerPnpmOffline; it skips without pnpm), with the machine's
# npm, into ${XDG_CACHE_HOME:-$HOME/.cache}/warden-ci beside Node 24, never
# system-wide: a second run on the same machine takes no time. Called by
# .ci/setup.sh go; safe to run by hand. With --print-path it installs
# nothing and prints where pnpm is (make gotest passes it as WARDEN_PNPM).
set -euo pipefail

PNPM_VERSION=12.21.0

cache=${WARDEN_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warden-ci}
dir="$cache/pnpm-$PNPM_VERSION"
bin="$dir/node_modules/.bin/pnpm"
if [ "${1:-}" = --print-path ]; then
	printf '%s\n' "$bin"
	exit 0
fi
[ -x "$bin" ] && "$bin" --version >/dev/null 2>&1 && exit 0

log() { printf 'pnpm-setup: %s\n' "$*" >&2; }
log "installing pnpm $PNPM_VERSION (npm package pnpm)"
mkdir -p "$cache"
export npm_config_cache="$cache/npm"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
# pnpm's install script puts its native binary in place: scripts stay on.
npm install --prefix "$dir.tmp" --no-save "pnpm@$PNPM_VERSION" >/dev/null
rm -rf "$dir"
mv "$dir.tmp" "$dir"
"$bin" --version >/dev/null
