#!/usr/bin/env bash
# The linters CI runs (scripts/test.sh runs this after go vet): staticcheck,
# go-errorlint (errors compared with == or asserted with .() where wrapping
# would break them) and revive's rules for exported names (revive.toml).
# Each is built once with `go install` into the tools cache, keyed by
# version, as scripts/test.sh caches helm and trivy, and fails on any
# finding.
#
#   scripts/lint.sh             # the whole module
#   scripts/lint.sh ./index/... # some packages
#
# To silence a finding that is wrong for the code, say why where it is:
# //lint:ignore CHECK reason (staticcheck), or a rule's setting in
# revive.toml with a comment.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS=${KBUILD_TOOLS:-$HOME/.cache/kbuild-tools/bin}
STATICCHECK_VERSION=v0.8.2
ERRORLINT_VERSION=v1.9.1
REVIVE_VERSION=v1.17.0
mkdir -p "$TOOLS"
export PATH="$TOOLS:$PATH"

log() { printf '==> %s\n' "$*" >&2; }

# install NAME PACKAGE VERSION builds PACKAGE@VERSION into $TOOLS unless the
# cached NAME is that version.
install() {
	if [ ! -x "$TOOLS/$1" ] || [ "$(cat "$TOOLS/.$1.version" 2>/dev/null)" != "$3" ]; then
		log "building $1 $3 (once)"
		GOBIN="$TOOLS" go install "$2@$3"
		echo "$3" >"$TOOLS/.$1.version"
	fi
}
install staticcheck honnef.co/go/tools/cmd/staticcheck "$STATICCHECK_VERSION"
install go-errorlint codeberg.org/polyfloyd/go-errorlint "$ERRORLINT_VERSION"
install revive github.com/mgechev/revive "$REVIVE_VERSION"

pkgs=("$@")
((${#pkgs[@]})) || pkgs=(./...)
rc=0
log "staticcheck"
staticcheck "${pkgs[@]}" || rc=1
log "go-errorlint"
go-errorlint "${pkgs[@]}" || rc=1
log "revive (exported names)"
revive -config revive.toml -set_exit_status "${pkgs[@]}" || rc=1
if ((rc)); then
	echo "lint: findings above; fix them (or, for a check that is wrong for the code, silence it where it is with the reason)" >&2
fi
exit "$rc"
