#!/usr/bin/env bash
# The upstream watch (.github/workflows/outdated.yml): runs kbuild outdated
# over the recipes, and for every recipe with a newer upstream version its
# watch.yaml allows, runs kbuild bump on a branch of its own
# (kbuild-bump/<recipe>) and opens one pull request per package with the
# bump's changes and rendered diff in the body, or updates the one already
# open for that branch (never a second). The outdated table goes to the
# job summary; a recipe that cannot be checked or bumped is annotated and
# the others still get their pull requests; the script exits 1 if any
# failed. Release sets get a pull request that moves their pins once all
# their members' bumps are published (with KBUILD_INDEX).
#
# Run it from the root of the recipes repository, on the base branch, with
# a clean work tree. Environment:
#   BASE               the branch pull requests merge into (default main)
#   RECIPES            the recipes directory (default recipes)
#   KBUILD             the kbuild binary (default kbuild)
#   KBUILD_CACHE_DIR   the source cache (default .cache/kbuild)
#   KBUILD_INDEX       the published index to diff against (default: the
#                      recipe at the base branch); with KBUILD_TRUST_KEY
#                      (default keys/index.pub). Release sets are bumped
#                      only with it: to their members' published builds
#   KBUILD_PLAIN_HTTP  1 to talk plain HTTP to registries on loopback
#   GH                 the GitHub CLI (default gh; GH_TOKEN in its env)
#   GITHUB_STEP_SUMMARY  the file the summary is appended to
set -euo pipefail

BASE=${BASE:-main}
RECIPES=${RECIPES:-recipes}
RECIPES=${RECIPES%/}
KBUILD=${KBUILD:-kbuild}
GH=${GH:-gh}
SUMMARY=${GITHUB_STEP_SUMMARY:-/dev/null}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags=(--cache-dir "${KBUILD_CACHE_DIR:-.cache/kbuild}")
[ "${KBUILD_PLAIN_HTTP:-}" = 1 ] && flags+=(--plain-http)
if [ -n "${KBUILD_INDEX:-}" ]; then
	flags+=(--index "$KBUILD_INDEX" --public-key "${KBUILD_TRUST_KEY:-keys/index.pub}")
fi
# shellcheck source=scripts/lib/pr.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/pr.sh"

# annotate turns kbuild's error lines into workflow annotations.
annotate() {
	[ "${GITHUB_ACTIONS:-}" = true ] || return 0
	grep '^error: ' "$1" | sed -e 's/%/%25/g' -e 's/^error: //' -e 's/^/::error title=kbuild::/' || true
}

failed=0

# 1. What is outdated: exit 0 nothing, 6 something, 1 a recipe or upstream
#    could not be checked (the others are still listed).
set +e
"$KBUILD" outdated "$RECIPES" >"$tmp/outdated.txt" 2>"$tmp/outdated.err"
rc=$?
set -e
cat "$tmp/outdated.err" >&2
annotate "$tmp/outdated.err"
case $rc in
0 | 6) ;;
1) failed=1 ;;
*) log "kbuild outdated failed (exit $rc)"; exit 1 ;;
esac
{
	echo "## Upstream versions"
	echo
	echo '```'
	cat "$tmp/outdated.txt"
	echo '```'
} >>"$SUMMARY"
cat "$tmp/outdated.txt"
# The recipe column of the rows whose status is "outdated".
mapfile -t outdated < <(awk 'NR > 1 && $NF == "outdated" { print $1 }' "$tmp/outdated.txt" | sort -u)
((${#outdated[@]} > 0)) || log "every watched recipe is up to date"

# bump_pr DIR runs kbuild bump on DIR on its branch (kbuild-bump/<name>)
# and opens or updates its pull request; a bump that changes nothing
# opens none.
bump_pr() {
	local dir=$1 name branch rc title
	name=$(basename "$dir")
	branch="kbuild-bump/$name"
	log "bumping $dir on $branch"
	bot_git checkout -q -B "$branch" "$BASE"
	set +e
	"$KBUILD" bump "$dir" "${flags[@]}" --format markdown >"$tmp/body.md" 2>"$tmp/bump.err"
	rc=$?
	set -e
	cat "$tmp/bump.err" >&2
	if ((rc != 0)); then
		annotate "$tmp/bump.err"
		failed=1
		bot_git checkout -q -f "$BASE"
		return 0
	fi
	if ! grep -q '^Bumps `' "$tmp/body.md"; then
		log "$dir: nothing to bump ($(head -n 1 "$tmp/body.md"))"
		bot_git checkout -q "$BASE"
		return 0
	fi
	# "Bumps `NAME` from A to B (build N)…" or, when only an upstream under
	# also: moved, "Bumps `NAME` at A to build N: WHAT moved."
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	title=$(head -n 1 "$tmp/body.md" | sed -E \
		-e 's/^Bumps `([^`]*)` from [^ ]* to ([^ ]*) \(build 1\).*/\1: bump to \2/' \
		-e 's/^Bumps `([^`]*)` from [^ ]* to ([^ ]*) \(build ([0-9]+)\).*/\1: bump to \2 build \3/' \
		-e 's/^Bumps `([^`]*)` at ([^ ]*) to build ([0-9]+): (.*)\.$/\1: \2 build \3 (\4)/')
	bot_git add -- "$dir"
	pr_publish "$branch" "$BASE" "$title" "$tmp/body.md" "$(head -n 1 "$tmp/body.md")"
}

# 2. One branch and one pull request per package.
for dir in "${outdated[@]}"; do
	bump_pr "$dir"
done

# 3. Release sets (recipes whose requirements pin exact builds,
#    "=VERSION+build.N"): one pull request per set moving its pins to the
#    builds its members' recipes are at, once the published index holds
#    them all; until then kbuild bump says what it waits for.
if [ -z "${KBUILD_INDEX:-}" ]; then
	log "release sets are bumped to their members' published builds: set KBUILD_INDEX to the published index"
else
	mapfile -t sets < <(grep -lE "^[[:space:]]*version:[[:space:]]*[\"']?=[^\"' ]+\+build\.[0-9]+" "$RECIPES"/*/recipe.yaml 2>/dev/null | xargs -r -n 1 dirname | sort)
	for dir in "${sets[@]}"; do
		bump_pr "$dir"
	done
fi
exit "$failed"
