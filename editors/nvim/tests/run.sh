#!/usr/bin/env bash
# Runs every tests/test_*.lua (or those whose name contains $1) in its own
# headless Neovim, with its own XDG and temp directories, against the real
# warden binary named by $WARDEN_BIN.
set -u
cd "$(dirname "$0")/.."
: "${WARDEN_BIN:?set WARDEN_BIN to the built warden binary (make build)}"
NVIM=${NVIM:-nvim}
if ! command -v "$NVIM" >/dev/null; then
	echo "nvim-test: Neovim not found; install it (Debian: apt-get install neovim)" >&2
	exit 1
fi
"$NVIM" --version | head -1

failed=()
for t in tests/test_*.lua; do
	if [ -n "${1:-}" ] && [[ "$t" != *"$1"* ]]; then
		continue
	fi
	tmp=$(mktemp -d)
	XDG_CONFIG_HOME=$tmp/config XDG_STATE_HOME=$tmp/state XDG_DATA_HOME=$tmp/data \
		XDG_CACHE_HOME=$tmp/cache TMPDIR=$tmp WARDEN_BIN=$WARDEN_BIN \
		timeout 120 "$NVIM" --headless --clean -u tests/minimal_init.lua -c "luafile $t" </dev/null >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		cat "$tmp/out"
		[ $rc -eq 124 ] && echo "FAIL $t: timed out"
		failed+=("$t")
	else
		grep -oE '(PASS|SKIP) .*' "$tmp/out" || echo "PASS $t"
	fi
	rm -rf "$tmp"
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "nvim-test: ${#failed[@]} failed: ${failed[*]}"
	exit 1
fi
echo "nvim-test: all passed"
