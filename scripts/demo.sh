#!/usr/bin/env bash
# A scripted tour of Warden's approvals through `warden exec`, in a
# temporary workspace, with no configuration and no model:
#   1. a safe command runs without asking,
#   2. a risky one shows its risk facts and asks (the script answers Deny),
#   3. a connection around Warden's proxy, which the sandbox refuses,
#   4. what the policy says about a history rewrite, as JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
warden=${WARDEN_BIN:-$PWD/bin/warden}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Nothing of the user's config, state or caches is read or written.
export XDG_CONFIG_HOME=$tmp/config XDG_STATE_HOME=$tmp/state XDG_CACHE_HOME=$tmp/cache
ws=$tmp/workspace
mkdir -p "$ws/src" "$ws/build"
printf 'package main\n\nfunc main() {}\n' >"$ws/src/main.go"
for d in $(seq 1 12); do
	mkdir -p "$ws/build/obj$d"
	for f in $(seq 1 100); do head -c 31000 /dev/zero >"$ws/build/obj$d/f$f.o"; done
done
head -c 62000 /dev/zero >"$ws/build/app"
for f in 1 2 3; do head -c 1000 /dev/zero >"$ws/build/lib$f.a"; done

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }
status() { printf '\033[2m(exit status %s)\033[0m\n' "$1"; }

step "1. A known-safe command runs at once, in the sandbox, without asking" \
	"warden exec --cwd workspace -- bash -c 'ls src && ls build | wc -l'"
code=0
"$warden" exec --cwd "$ws" -- bash -c 'ls src && ls build | wc -l' 2>&1 || code=$?
status $code

step "2. Under untrusted, a deletion shows its risk facts and asks (this script answers Deny)" \
	"warden exec --cwd workspace --approval untrusted --deny -- rm -rf build"
code=0
"$warden" exec --cwd "$ws" --approval untrusted --deny -- rm -rf build 2>&1 || code=$?
status $code
echo "build/ is still there: $(find "$ws/build" -type f | wc -l) files"

step "3. A connection around Warden's proxy is refused in the sandbox: it fails and is reported" \
	"warden exec --cwd workspace -- bash -c 'exec 3<>/dev/tcp/1.1.1.1/80 && echo connected'"
code=0
"$warden" exec --cwd "$ws" -- bash -c 'exec 3<>/dev/tcp/1.1.1.1/80 && echo connected' 2>&1 || code=$?
status $code

step "4. What the policy decides, as JSON, for a history rewrite" \
	"warden policy check --json -- git push --force origin main"
"$warden" policy check --json --cwd "$ws" -- git push --force origin main

printf '\nEvery request and decision above was appended to the audit log:\n'
sed 's/^/  /' "$XDG_STATE_HOME/warden/audit.log" | cut -c1-160
