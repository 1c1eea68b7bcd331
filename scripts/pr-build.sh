#!/usr/bin/env bash
# The recipe checks of a pull request (.github/workflows/pr.yml): for every
# recipe directory the pull request changes,
#   1. fail if its version and build are already published with other
#      content (kbuild diff --index the published index
#      --fail-on-immutable-change): published versions never change;
#   2. build it into a throwaway registry (nothing is published);
#   3. append what changed against the base branch, per rendered object, to
#      the job summary (kbuild diff --base --format markdown).
# Every step runs even when an earlier one failed, so that the summary is
# complete; the script exits 1 if any failed.
#
# Run it from the root of the recipes repository. Environment:
#   BASE_REF             the branch merged into, e.g. origin/main (required)
#   KBUILD_REGISTRY      the throwaway registry, oci://HOST/PATH (required)
#   KBUILD_PLAIN_HTTP    1 to talk plain HTTP to registries on loopback
#   PAGES_URL            where the index is published (its index.yaml is the
#                        base of step 1, skipped while nothing is published)
#   KBUILD_TRUST_KEY     public key the published index is verified with
#                        (default keys/index.pub)
#   RECIPES              the recipes directory (default recipes)
#   KBUILD_CACHE_DIR     the source cache (default .cache/kbuild)
#   DIST                 where build records go (default: a temp dir)
#   KBUILD               the kbuild binary (default kbuild)
#   GITHUB_STEP_SUMMARY  the file the Markdown summary is appended to
set -euo pipefail

: "${BASE_REF:?set BASE_REF to the branch the pull request merges into, e.g. origin/main}"
: "${KBUILD_REGISTRY:?set KBUILD_REGISTRY to a throwaway registry, e.g. oci://localhost:5000/pr}"
RECIPES=${RECIPES:-recipes}
RECIPES=${RECIPES%/}
KBUILD=${KBUILD:-kbuild}
SUMMARY=${GITHUB_STEP_SUMMARY:-/dev/null}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DIST=${DIST:-$tmp/dist}
flags=(--cache-dir "${KBUILD_CACHE_DIR:-.cache/kbuild}")
[ "${KBUILD_PLAIN_HTTP:-}" = 1 ] && flags+=(--plain-http)

log() { printf '==> %s\n' "$*" >&2; }

# annotate turns kbuild's error lines into workflow annotations.
annotate() {
	[ "${GITHUB_ACTIONS:-}" = true ] || return 0
	sed -e 's/%/%25/g' -e 's/^error: //' -e 's/^/::error title=kbuild::/' "$1"
}

# The recipe directories with a changed file: $RECIPES/<dir>/...
declare -A seen=()
present=() removed=()
while IFS= read -r file; do
	rest=${file#"$RECIPES"/}
	[ "$rest" != "${rest%%/*}" ] || continue # a file directly in $RECIPES
	dir="$RECIPES/${rest%%/*}"
	[ -z "${seen[$dir]:-}" ] || continue
	seen[$dir]=1
	if [ -f "$dir/recipe.yaml" ]; then
		present+=("$dir")
	else
		removed+=("$dir")
	fi
done < <(git diff --name-only "$BASE_REF...HEAD" -- "$RECIPES/" | sort)

{
	echo "## Recipes changed by this pull request"
	echo
} >>"$SUMMARY"
for dir in "${removed[@]}"; do
	log "$dir: removed (its published versions stay in the index)"
	printf '### %s: removed\n\nIts published versions stay in the index.\n\n' "$dir" >>"$SUMMARY"
done
if [ "${#present[@]}" -eq 0 ]; then
	log "no recipe changed"
	echo "No recipe changed." >>"$SUMMARY"
	exit 0
fi
log "changed: ${present[*]}"
failed=0

# 1. Published versions do not change.
if [ -n "${PAGES_URL:-}" ]; then
	url="${PAGES_URL%/}/index.yaml"
	status=$(curl -sS -o /dev/null -w '%{http_code}' "$url") || status=000
	case $status in
	200)
		log "checking against $url that no published version changes"
		if ! "$KBUILD" diff "${present[@]}" --index "$url" --public-key "${KBUILD_TRUST_KEY:-keys/index.pub}" --fail-on-immutable-change "${flags[@]}" >"$tmp/against.txt" 2>"$tmp/against.err"; then
			failed=1
			cat "$tmp/against.err" >&2
			annotate "$tmp/against.err"
			{
				echo "> [!CAUTION]"
				sed 's/^/> /' "$tmp/against.err"
				echo
			} >>"$SUMMARY"
		fi
		;;
	404) log "nothing is published at $url yet: no version to keep unchanged" ;;
	*)
		echo "error: $url: HTTP $status; cannot check the published versions" >&2
		failed=1
		;;
	esac
fi

# 2. Build into the throwaway registry.
log "building into $KBUILD_REGISTRY"
if ! "$KBUILD" build "${present[@]}" --registry "$KBUILD_REGISTRY" -o "$DIST" "${flags[@]}" >"$tmp/build.txt" 2>"$tmp/build.err"; then
	failed=1
	cat "$tmp/build.txt" "$tmp/build.err" >&2
	annotate "$tmp/build.err"
	{
		echo "> [!CAUTION]"
		echo "> kbuild build failed:"
		echo
		echo '```'
		cat "$tmp/build.txt" "$tmp/build.err"
		echo '```'
		echo
	} >>"$SUMMARY"
else
	cat "$tmp/build.txt"
fi

# 3. What changed, for the reviewers. GitHub takes at most 1 MiB of
# summary per step; kbuild bounds each recipe's part, this the whole.
if ! "$KBUILD" diff "${present[@]}" --base "$BASE_REF" --format markdown "${flags[@]}" >"$tmp/diff.md" 2>"$tmp/diff.err"; then
	failed=1
	cat "$tmp/diff.err" >&2
	annotate "$tmp/diff.err"
fi
limit=$((900 * 1024))
if [ "$(wc -c <"$tmp/diff.md")" -gt "$limit" ]; then
	head -c "$limit" "$tmp/diff.md" >>"$SUMMARY"
	# shellcheck disable=SC2016 # the backticks are Markdown
	printf '\n\n_The summary is cut here: run `kbuild diff DIR --base %s` for the rest._\n' "$BASE_REF" >>"$SUMMARY"
else
	cat "$tmp/diff.md" >>"$SUMMARY"
fi
exit "$failed"
