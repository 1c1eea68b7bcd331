#!/usr/bin/env bash
# The command step of the GitHub Action (action.yml): runs one kbuild job
# in the recipes repository (the working directory) with the kbuild on
# PATH. Annotations and the step summary come from kbuild and the scripts
# themselves (GITHUB_ACTIONS, GITHUB_STEP_SUMMARY).
#
#   scripts/action-run.sh test      # kbuild validate RECIPES, every recipe
#   scripts/action-run.sh diff      # pull request: immutability check, a
#                                   # throwaway build, the diff in the summary
#                                   # (scripts/pr-build.sh)
#   scripts/action-run.sh plan      # what to build, as shards (publish.sh plan)
#   scripts/action-run.sh build DIR...      # one shard (publish.sh build)
#   scripts/action-run.sh publish RECORDS   # sign and write the site
#   scripts/action-run.sh promote NAME@VERSION BUILD SUITE
#
# The environment is that of scripts/pr-build.sh and scripts/publish.sh
# (KBUILD_REGISTRY, PAGES_URL, KBUILD_SIGN_KEY, RECIPES, …); the action
# sets it from its inputs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:?usage: scripts/action-run.sh test|diff|plan|build|publish|promote [ARGS...]}
shift
case "$cmd" in
test)
	recipes=${RECIPES:-recipes}
	exec "${KBUILD:-kbuild}" validate --cache-dir "${KBUILD_CACHE_DIR:-.cache/kbuild}" "$@" "${recipes%/}/"
	;;
diff) exec "$here/pr-build.sh" "$@" ;;
plan | build | publish | promote) exec "$here/publish.sh" "$cmd" "$@" ;;
*)
	echo "action-run.sh: unknown command $cmd; want test, diff, plan, build, publish or promote" >&2
	exit 2
	;;
esac
