#!/usr/bin/env bash
# The steps of .github/workflows/publish.yml, one subcommand each, so that
# the workflow and the local end-to-end test (cmd/kbuild/workflows_test.go)
# run the same commands:
#
#   scripts/publish.sh plan                  # recipes to build, as shards
#   scripts/publish.sh build RECIPE_DIR...   # build and push one shard
#   scripts/publish.sh publish RECORDS_DIR   # sign the index, write the site
#
# plan prints `kbuild plan --format json` against the published index (everything
# is new before the first publish) and, under GitHub Actions, writes
# plan=<json> and shards=<number of shards> to $GITHUB_OUTPUT.
# build runs `kbuild build` into $KBUILD_REGISTRY with records in $DIST.
# publish runs `kbuild publish` on the recipes with the build jobs' records
# under RECORDS_DIR as its output directory: it merges into the published
# index after verifying it with $KBUILD_TRUST_KEY (a first publish, when
# Pages answers 404, starts a new index), signs with the key in
# $KBUILD_SIGN_KEY and writes the site to $SITE; then every chart of the new
# index is pulled anonymously (scripts/check-anonymous-pull.sh). With
# nothing new it re-signs the published index with a new expiry (the weekly
# run).
#
# Run it from the root of the recipes repository. Environment:
#   KBUILD_REGISTRY    oci://HOST/PATH charts are pushed to (build, publish)
#   PAGES_URL          where the site is served; its index.yaml is the
#                      published index (a 404 means nothing is published yet)
#   KBUILD_SIGN_KEY    PEM ed25519 private key signing the index (publish)
#   KBUILD_TRUST_KEY   public key the published index is verified with
#                      (default keys/index.pub; plan and publish)
#   SHARDS             build jobs at most (plan; default 4)
#   RECIPES            the recipes directory (default recipes)
#   KBUILD_CACHE_DIR   the source cache (default .cache/kbuild)
#   DIST               build records of this job (default dist)
#   SITE               the site written by publish (default _site)
#   KBUILD_PLAIN_HTTP  1 to talk plain HTTP to registries on loopback (tests)
#   KBUILD             the kbuild binary (default kbuild)
set -euo pipefail

KBUILD=${KBUILD:-kbuild}
RECIPES=${RECIPES:-recipes}
RECIPES=${RECIPES%/}
DIST=${DIST:-dist}
SITE=${SITE:-_site}
CACHE=${KBUILD_CACHE_DIR:-.cache/kbuild}
plain=()
[ "${KBUILD_PLAIN_HTTP:-}" = 1 ] && plain=(--plain-http)

log() { printf '==> %s\n' "$*" >&2; }

# published_index prints the URL of the published index.yaml, or nothing
# when nothing is published yet (HTTP 404); any other answer is an error.
published_index() {
	: "${PAGES_URL:?set PAGES_URL to where the site is served, e.g. https://OWNER.github.io/REPO}"
	local url="${PAGES_URL%/}/index.yaml" status
	status=$(curl -sS -o /dev/null -w '%{http_code}' "$url") || status=000
	case $status in
	200) echo "$url" ;;
	404) log "nothing is published at $url yet: a first publish" ;;
	*)
		echo "error: $url: HTTP $status; the published index must be readable to build on it" >&2
		return 1
		;;
	esac
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
plan)
	index=$(published_index)
	args=(plan "$RECIPES/" --shards "${SHARDS:-4}" --format json)
	[ -n "$index" ] && args+=(--index "$index" --public-key "${KBUILD_TRUST_KEY:-keys/index.pub}")
	plan=$("$KBUILD" "${args[@]}")
	echo "$plan"
	shards=$({ grep -o '"index":' <<<"$plan" || true; } | wc -l | tr -d ' ')
	if [ -n "${GITHUB_OUTPUT:-}" ]; then
		{
			echo "plan=$plan"
			echo "shards=$shards"
		} >>"$GITHUB_OUTPUT"
	fi
	;;
build)
	[ $# -gt 0 ] || { echo "usage: publish.sh build RECIPE_DIR..." >&2; exit 2; }
	: "${KBUILD_REGISTRY:?set KBUILD_REGISTRY to oci://HOST/PATH, e.g. oci://ghcr.io/OWNER/packages}"
	"$KBUILD" build "$@" --registry "$KBUILD_REGISTRY" -o "$DIST" --cache-dir "$CACHE" "${plain[@]}"
	;;
publish)
	records=${1:?usage: publish.sh publish RECORDS_DIR}
	: "${KBUILD_REGISTRY:?set KBUILD_REGISTRY to oci://HOST/PATH, e.g. oci://ghcr.io/OWNER/packages}"
	: "${KBUILD_SIGN_KEY:?set KBUILD_SIGN_KEY to the PEM private key that signs the index}"
	: "${PAGES_URL:?set PAGES_URL to where the site is served, e.g. https://OWNER.github.io/REPO}"
	mkdir -p "$records"
	url="${PAGES_URL%/}/index.yaml"
	merge=(--index "$url" --public-key "${KBUILD_TRUST_KEY:-keys/index.pub}")
	index=$(published_index) # fails on anything but 200 and 404
	[ -n "$index" ] || merge+=(--allow-new)
	# The records of the build jobs are the output directory: publish
	# indexes them with its own (it rebuilds what the published index lacks,
	# reusing the charts the build jobs pushed, to sign their provenance).
	"$KBUILD" publish "$RECIPES/" --registry "$KBUILD_REGISTRY" --sign-key-env KBUILD_SIGN_KEY \
		--site "$SITE" -o "$records" --cache-dir "$CACHE" "${merge[@]}" "${plain[@]}"
	"$(dirname "$0")/check-anonymous-pull.sh" "$SITE/index.yaml"
	;;
*)
	echo "usage: publish.sh plan | build RECIPE_DIR... | publish RECORDS_DIR" >&2
	exit 2
	;;
esac
