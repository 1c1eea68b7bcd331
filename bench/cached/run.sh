#!/usr/bin/env bash
# A second build of 100 cached recipes: makes zero network requests (the
# test asserts that) and prints the wall times of the first, second and
# offline builds for bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
go test ./builder/ -run '^TestCachedBuildNoNetwork$' -count=1 -v | grep -E 'recipes: first build|^(ok|FAIL|---)'
