#!/usr/bin/env bash
# The last job of the qualify workflow (.github/workflows/qualify.yml):
# the evidence every matrix cell signed, copied into evidence/ on one
# branch (kbuild-qualify), and ONE pull request with all of it, opened or,
# when one is open for the branch, updated. Merging it is what lets
# kbuild publish copy the evidence into the site and kbuild promote count
# it. Nothing new, no pull request.
#
# Run it from the root of the recipes repository, on the base branch, with
# a clean work tree. Environment:
#   IN        the cells' evidence trees, merged (default qualify-out/evidence)
#   EVIDENCE  the committed evidence (default evidence)
#   BASE      the branch the pull request merges into (default main)
#   BRANCH    the pull request's branch (default kbuild-qualify)
#   GH        the GitHub CLI (default gh; GH_TOKEN in its env)
#   GITHUB_STEP_SUMMARY  the file the summary is appended to
set -euo pipefail

IN=${IN:-qualify-out/evidence}
EVIDENCE=${EVIDENCE:-evidence}
BASE=${BASE:-main}
BRANCH=${BRANCH:-kbuild-qualify}
GH=${GH:-gh}
SUMMARY=${GITHUB_STEP_SUMMARY:-/dev/null}
# shellcheck source=scripts/lib/pr.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/pr.sh"

mapfile -t files < <(cd "$IN" 2>/dev/null && find . -name '*.intoto.json' -type f | sed 's|^\./||' | sort)
if ((${#files[@]} == 0)); then
	log "no evidence to propose"
	exit 0
fi
bot_git checkout -q -B "$BRANCH" "$BASE"
for f in "${files[@]}"; do
	mkdir -p "$EVIDENCE/$(dirname "$f")"
	cp "$IN/$f" "$EVIDENCE/$f"
done
bot_git add -- "$EVIDENCE"
if bot_git diff --cached --quiet; then
	log "the evidence is committed already"
	bot_git checkout -q "$BASE"
	exit 0
fi
title="evidence: kbuild test of ${#files[@]} build and cluster pair(s)"
body=$(mktemp)
trap 'rm -f "$body"' EXIT
{
	echo "Signed test evidence from \`kbuild test\` (.github/workflows/qualify.yml), one file per build and kind cluster:"
	echo
	for f in "${files[@]}"; do echo "- \`$EVIDENCE/$f\`"; done
	echo
	echo "Each file names its result and the environment read from the cluster; \`kbuild repo verify --evidence\` and \`kbuild promote\` check it against the index."
	echo "kind clusters ran the containers: image pulls and start-up are covered; application behaviour only as far as readiness and the charts' tests show it."
} >"$body"
pr_publish "$BRANCH" "$BASE" "$title" "$body"
