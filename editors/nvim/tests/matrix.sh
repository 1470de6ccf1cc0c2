#!/usr/bin/env bash
# Runs the headless suite (run.sh) on the system Neovim (Debian: 0.7.2) and on
# every Neovim build in the shared tools directory (default: ../shared/tools
# next to the repository), each extracted once into a cache outside the repo.
# A user's clone has no such directory: a missing build is then skipped,
# said loudly and listed in make test's summary ($WARDEN_SKIP_LOG); under
# WARDEN_REQUIRE_ALL=1 (CI) it is a failure. WARDEN_NVIM_SYSTEM=skip leaves
# out the system Neovim (make nvim-test sets it when it cannot be installed).
# $1 filters tests as in run.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
tools=${WARDEN_NVIM_TOOLS:-$repo/../shared/tools}
# In a git worktree elsewhere, the main checkout's sibling is the one meant.
if [ -z "${WARDEN_NVIM_TOOLS:-}" ] && [ ! -d "$tools" ]; then
	common=$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) &&
		tools=$(dirname "$common")/../shared/tools
fi
cache=${WARDEN_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/warden-ci}
# The builds CI must cover; any other nvim*.tar.gz found there runs too.
required=(nvim-linux-x86_64.tar.gz nvim-0.12-linux-x86_64.tar.gz)
export LANG=C.UTF-8

failed=()
tarballs=()
for name in "${required[@]}"; do
	if [ ! -f "$tools/$name" ]; then
		if [ "${WARDEN_REQUIRE_ALL:-}" = 1 ]; then
			echo "nvim-test: missing Neovim build $tools/$name" >&2
			failed+=("$name (missing)")
		else
			echo "=== nvim-test: SKIPPED $name: no such build in $tools (set WARDEN_NVIM_TOOLS to a directory holding it)" >&2
			[ -n "${WARDEN_SKIP_LOG:-}" ] && echo "the Neovim suite on $name: not found in $tools (WARDEN_NVIM_TOOLS)" >>"$WARDEN_SKIP_LOG"
		fi
	fi
done
for t in "$tools"/nvim*.tar.gz; do
	[ -f "$t" ] && tarballs+=("$t")
done

# Extracts tarball $1 (cached by content) and prints its nvim binary.
extract() {
	local sum dir
	sum=$(sha256sum "$1" | cut -c1-12) || return 1
	dir=$cache/nvim-$(basename "$1" .tar.gz)-$sum
	if [ ! -x "$dir/nvim-linux-x86_64/bin/nvim" ]; then
		rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" &&
			tar -xzf "$1" -C "$dir.tmp" &&
			rm -rf "$dir" && mv "$dir.tmp" "$dir" || return 1
	fi
	echo "$dir/nvim-linux-x86_64/bin/nvim"
}

suite() {
	local start=$SECONDS
	echo "=== nvim-test: $("$1" --version | head -1) ($1)"
	NVIM=$1 "$here/run.sh" "${2:-}"
	local rc=$?
	echo "=== nvim-test: $("$1" --version | head -1): $((SECONDS - start))s"
	return $rc
}

if [ "${WARDEN_NVIM_SYSTEM:-}" = skip ]; then
	echo "=== nvim-test: SKIPPED the system Neovim (Debian's neovim, 0.7.2): not installed" >&2
else
	suite "${NVIM:-nvim}" "${1:-}" || failed+=("system nvim")
fi
for t in "${tarballs[@]}"; do
	if ! bin=$(extract "$t"); then
		echo "nvim-test: could not extract $t" >&2
		failed+=("$(basename "$t") (extract)")
		continue
	fi
	suite "$bin" "${1:-}" || failed+=("$(basename "$t")")
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "nvim-test: failed on: ${failed[*]}"
	exit 1
fi
echo "nvim-test: all Neovim versions passed"
