#!/usr/bin/env bash
# Installs pnpm and yarn classic for the Go tests of layered toolchain caches
# (TestCacheLayerPnpmOffline, TestCacheLayerYarnOffline; each skips without
# its tool), with the machine's npm, into
# ${XDG_CACHE_HOME:-$HOME/.cache}/warden-ci beside Node 24, never
# system-wide: a second run on the same machine takes no time. Called by
# .ci/setup.sh go; safe to run by hand. With --print-path TOOL (pnpm or
# yarn) it installs nothing and prints where TOOL is (make gotest passes
# them as WARDEN_PNPM and WARDEN_YARN).
set -euo pipefail

PNPM_VERSION=12.21.0
YARN_VERSION=1.22.22

cache=${WARDEN_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warden-ci}

# bin_of TOOL: where TOOL's executable is once installed.
bin_of() {
	case $1 in
	pnpm) printf '%s\n' "$cache/pnpm-$PNPM_VERSION/node_modules/.bin/pnpm" ;;
	yarn) printf '%s\n' "$cache/yarn-$YARN_VERSION/node_modules/.bin/yarn" ;;
	*)
		printf 'node-tools-setup: unknown tool %q: want pnpm or yarn\n' "$1" >&2
		exit 2
		;;
	esac
}

if [ "${1:-}" = --print-path ]; then
	bin_of "${2:?--print-path needs a tool: pnpm or yarn}"
	exit 0
fi

log() { printf 'node-tools-setup: %s\n' "$*" >&2; }

# install TOOL VERSION: npm package TOOL@VERSION under $cache/TOOL-VERSION.
install() {
	local tool=$1 version=$2 dir="$cache/$1-$2" bin
	bin=$(bin_of "$tool")
	[ -x "$bin" ] && "$bin" --version >/dev/null 2>&1 && return 0
	log "installing $tool $version (npm package $tool)"
	mkdir -p "$cache"
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	# pnpm's install script puts its native binary in place: scripts stay on.
	npm install --prefix "$dir.tmp" --no-save "$tool@$version" >/dev/null
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	"$bin" --version >/dev/null
}

export npm_config_cache="$cache/npm"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
install pnpm "$PNPM_VERSION"
install yarn "$YARN_VERSION"
