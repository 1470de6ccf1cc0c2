#!/usr/bin/env bash
# Runs every Go test (race detector on) against bin/warden with HOME in a
# fresh directory and the XDG base directories unset, Go's own caches kept
# where they are; then fails if anything appeared in that home's Warden
# directories. Each test package isolates itself (internal/testhome), so a
# file there means a test that would have written the user's real
# ~/.config/warden, ~/.local/state/warden or ~/.cache/warden.
# Usage: .ci/gotest.sh WARDEN_BIN [go test args...]
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:?usage: .ci/gotest.sh WARDEN_BIN [go test args]}
shift
go=${GO:-go}

# The home lies outside /tmp and $TMPDIR, the sandbox's writable roots (a
# home there changes what the policy decides): in bin/, else /var/tmp.
mkdir -p bin
home=
for d in "$PWD/bin" /var/tmp; do
	r=$(cd "$d" && pwd -P)
	case "$r/" in
	/tmp/* | "$(cd "${TMPDIR:-/tmp}" && pwd -P)"/*) continue ;;
	esac
	home=$(mktemp -d "$r/.gotest-home.XXXXXX") && break
done
[ -n "$home" ] || { echo "gotest: no directory outside /tmp and \$TMPDIR for the test home" >&2; exit 1; }
trap 'chmod -R u+w "$home" 2>/dev/null; rm -rf "$home"' EXIT
env -u XDG_CONFIG_HOME -u XDG_STATE_HOME -u XDG_CACHE_HOME -u XDG_DATA_HOME \
	HOME="$home" \
	GOCACHE="$("$go" env GOCACHE)" GOMODCACHE="$("$go" env GOMODCACHE)" \
	GOPATH="$("$go" env GOPATH)" GOENV="$("$go" env GOENV)" \
	WARDEN_BIN="$bin" "$go" test -race -count=1 "${@:-./...}"
rc=$?

leaked=$(cd "$home" && find .config/warden .local/state/warden .cache/warden -mindepth 1 -maxdepth 2 2>/dev/null | head -20)
if [ -n "$leaked" ]; then
	echo "gotest: tests wrote into HOME's Warden directories (the user's real ones, outside this check):" >&2
	echo "$leaked" | sed 's/^/  ~\//' >&2
	echo "gotest: give the test package a TestMain that calls internal/testhome" >&2
	exit 1
fi
exit $rc
