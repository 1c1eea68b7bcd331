#!/usr/bin/env bash
# The linters CI runs (scripts/test.sh runs this after go vet): gofmt, staticcheck,
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

. scripts/tools.sh
STATICCHECK_VERSION=v0.8.2
ERRORLINT_VERSION=v1.9.1
REVIVE_VERSION=v1.17.0
tool staticcheck honnef.co/go/tools/cmd/staticcheck "$STATICCHECK_VERSION" "about a minute, once"
tool go-errorlint codeberg.org/polyfloyd/go-errorlint "$ERRORLINT_VERSION"
tool revive github.com/mgechev/revive "$REVIVE_VERSION"

pkgs=("$@")
((${#pkgs[@]})) || pkgs=(./...)
rc=0
if ((! $#)); then
	log "gofmt"
	unformatted=$(git ls-files -z '*.go' | xargs -0 gofmt -l)
	if [ -n "$unformatted" ]; then
		echo "gofmt would change: $unformatted (run gofmt -w on them)" >&2
		rc=1
	fi
fi
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
