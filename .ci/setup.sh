#!/usr/bin/env bash
# Checks (and, when asked, installs) what one test suite needs, on a machine
# that has Go, gcc, git, node and npm; `make test` calls it before each suite,
# `make test-deps` with WARDEN_INSTALL_DEPS=1, and .ci/run calls both.
#
#   .ci/setup.sh go       Go modules; pnpm, yarn (.ci/node-tools-setup.sh, under
#                         ~/.cache/warden-ci); Debian's emacs-nox + elpa-eglot
#                         for the real-Emacs test (it skips itself without them)
#   .ci/setup.sh nvim     Debian's neovim (0.7.2) unless an nvim is on PATH; the
#                         relocatable builds in ../shared/tools are the suite's
#   .ci/setup.sh vscode   Debian's chromium and build tools, then Node 24 and
#                         code-server (.ci/vscode-setup.sh, under ~/.cache/warden-ci)
#
# Debian packages are installed system-wide only when asked: WARDEN_INSTALL_DEPS=1
# (make test-deps), as root or through sudo without a password. Otherwise,
# even as root, this says what is missing and the command that installs it,
# and exits 3: the suite is skipped, unless WARDEN_REQUIRE_ALL=1 (CI), where
# a suite that cannot run is a failure. Each skip is also appended to
# $WARDEN_SKIP_LOG, for make test's summary. Node 24 and code-server go to a
# cache in the user's home, never system-wide, and are always set up.
set -uo pipefail
cd "$(dirname "$0")/.."
suite=${1:?usage: .ci/setup.sh go|nvim|vscode}

log() { printf 'setup %s: %s\n' "$suite" "$*" >&2; }

# can_apt: apt-get exists and we may run it.
can_apt() {
	command -v apt-get >/dev/null && command -v dpkg >/dev/null || return 1
	[ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null
}
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

# missing_packages PKG...: prints the Debian packages not installed (all of
# them where dpkg does not exist).
missing_packages() {
	local p
	for p in "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || echo "$p"
	done
}

# ensure_packages WHAT PKG...: installs the missing packages, or explains
# and returns 3 when it cannot.
ensure_packages() {
	local what=$1
	shift
	local missing
	missing=$(missing_packages "$@" | tr '\n' ' ')
	missing=${missing% }
	[ -z "$missing" ] && return 0
	if [ "${WARDEN_INSTALL_DEPS:-}" != 1 ]; then
		cat >&2 <<-MSG

		######################################################################
		## SKIPPED: $what
		## needs the Debian packages: $missing
		## Install them (system-wide, as root or with sudo), then run make test again:
		##     make test-deps
		## or: sudo apt-get install $missing
		######################################################################

		MSG
		[ -n "${WARDEN_SKIP_LOG:-}" ] && echo "$what: make test-deps (sudo apt-get install $missing)" >>"$WARDEN_SKIP_LOG"
		return 3
	fi
	if ! can_apt; then
		log "cannot install $missing: apt-get cannot run here (not root, no password-less sudo); run: sudo apt-get install $missing"
		return 1
	fi
	log "apt-get install $missing"
	export DEBIAN_FRONTEND=noninteractive
	sudo_ apt-get update -qq &&
		sudo_ apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
		log "apt-get install $missing failed"
		return 1
	}
}

# skipped: a suite that cannot run; a failure where everything must run.
skipped() {
	if [ "${WARDEN_REQUIRE_ALL:-}" = 1 ]; then
		log "WARDEN_REQUIRE_ALL=1: a suite that cannot run is a failure"
		exit 1
	fi
	exit 3
}

case $suite in
go)
	go mod download || exit 1
	# pnpm and yarn for the layered caches' tests, into a cache in the home.
	bash .ci/node-tools-setup.sh || exit 1
	# Only the real-Emacs end-to-end test needs these; it skips without them.
	ensure_packages "TestPlainClientRealEmacsEglot (real Emacs + eglot)" emacs-nox elpa-eglot
	rc=$?
	[ $rc = 3 ] && [ "${WARDEN_REQUIRE_ALL:-}" = 1 ] && exit 1
	[ $rc = 1 ] && exit 1
	exit 0
	;;
nvim)
	command -v nvim >/dev/null && exit 0
	ensure_packages "the Neovim suite on Debian's Neovim 0.7.2 (the builds in ../shared/tools still run)" neovim
	case $? in
	0) exit 0 ;;
	3) skipped ;;
	*) exit 1 ;;
	esac
	;;
vscode)
	ensure_packages "the VS Code suite (make vscodetest)" chromium libkrb5-dev pkg-config python3 make g++
	case $? in
	0) ;;
	3) skipped ;;
	*) exit 1 ;;
	esac
	start=$SECONDS
	bash .ci/vscode-setup.sh || exit 1
	log "Node 24 and code-server ready ($((SECONDS - start))s)"
	;;
*)
	echo "usage: .ci/setup.sh go|nvim|vscode" >&2
	exit 2
	;;
esac
