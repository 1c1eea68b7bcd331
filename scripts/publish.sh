#!/usr/bin/env bash
# The steps of .github/workflows/publish.yml, one subcommand each, so that
# the workflow and the local end-to-end test (cmd/kbuild/workflows_test.go)
# run the same commands:
#
#   scripts/publish.sh plan                  # recipes to build, as shards
#   scripts/publish.sh build RECIPE_DIR...   # build and push one shard
#   scripts/publish.sh publish RECORDS_DIR   # sign the index, write the site
#   scripts/publish.sh promote NAME@VERSION BUILD SUITE   # promote.yml
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
# run); with suites, every later suite the site holds is re-signed too,
# and every suite's followable OCI repositories (REPO/suites/SUITE/CHART,
# what Flux, Argo CD and Helm clusters follow) are brought to its index
# ('kbuild repo follow'), as after a promotion.
#
# With a suites file ($SUITES, suites.yaml at the repository root by
# default), publish writes the first suite (SITE/<first>/) and the suites
# file must serve it at the site root too
# (rootSuite: <first>), so PAGES_URL/index.yaml stays the index today's
# subscribers read. Its base is PAGES_URL/<first>/index.yaml, or, before
# the first publish with suites, PAGES_URL/index.yaml (the index from
# before suites, which becomes the first suite's). Evidence committed under
# evidence/ is verified against the root (KBUILD_ROOT) and published with
# it. Neither publish nor promote deploys a site that lacks a suite Pages
# serves: the restored site would take it down.
#
# promote moves NAME@VERSION build BUILD into SUITE ('kbuild promote')
# on the restored site, after checking it is what Pages serves, and pulls
# the charts of SUITE's new index anonymously. The first promotion into a
# suite (Pages answers 404 for it) starts its index.
#
# Run it from the root of the recipes repository. Environment:
#   KBUILD_REGISTRY    oci://HOST/PATH charts are pushed to (build, publish)
#   PAGES_URL          where the site is served; its index.yaml is the
#                      published index (a 404 means nothing is published yet)
#   KBUILD_SIGN_KEY    PEM ed25519 private key signing the index (publish, promote)
#   KBUILD_ROOT        the root of trust, with its qa role (default
#                      keys/root.yaml; publish uses it when it exists,
#                      promote needs it)
#   KBUILD_TRUST_KEY   public key the published index is verified with
#                      (default keys/index.pub; plan and publish)
#   SHARDS             build jobs at most (plan; default 4)
#   RECIPES            the recipes directory (default recipes)
#   SUITES             the suites file (default suites.yaml); every step
#                      reads this one, and kbuild is given it (--suites)
#   KBUILD_CACHE_DIR   the source cache (default .cache/kbuild)
#   KBUILD_KEYLESS     true to also sign the charts keylessly (publish:
#                      --keyless; GitHub's OIDC token, id-token: write)
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

ROOT=${KBUILD_ROOT:-keys/root.yaml}
SUITES=${SUITES:-suites.yaml}

log() { printf '==> %s\n' "$*" >&2; }

# published_at prints the URL of PATH (default index.yaml) under PAGES_URL,
# or nothing when Pages answers 404; any other answer is an error.
published_at() {
	: "${PAGES_URL:?set PAGES_URL to where the site is served, e.g. https://OWNER.github.io/REPO}"
	local url="${PAGES_URL%/}/${1:-index.yaml}" status
	status=$(curl -sS -o /dev/null -w '%{http_code}' "$url") || status=000
	case $status in
	200) echo "$url" ;;
	404) ;;
	*)
		echo "error: $url: HTTP $status; the published index must be readable to build on it" >&2
		return 1
		;;
	esac
}

# published_index prints the URL of the published index.yaml, or nothing
# when nothing is published yet.
published_index() {
	local url
	url=$(published_at index.yaml)
	[ -n "$url" ] || log "nothing is published at ${PAGES_URL%/}/index.yaml yet: a first publish"
	echo "$url"
}

# suites prints the suites of $SUITES in order, nothing without one. It
# reads the block style kbuild's suites files use ("  - name: X").
suites() {
	[ -f "$SUITES" ] || return 0
	local names
	names=$(sed -n 's/^[[:space:]]*-[[:space:]]*name:[[:space:]]*\([a-z0-9-]*\)[[:space:]]*$/\1/p' "$SUITES")
	[ -n "$names" ] || { echo "error: $SUITES: no suite found; list them as '  - name: SUITE' lines" >&2; return 1; }
	echo "$names"
}

# check_suites refuses a site that lacks a suite Pages serves: deploying
# it would take that suite down for its subscribers.
check_suites() {
	local s
	for s in "$@"; do
		if [ ! -f "$SITE/$s/index.yaml" ] && [ -n "$(published_at "$s/index.yaml")" ]; then
			echo "error: $SITE/$s/index.yaml is missing, but Pages serves ${PAGES_URL%/}/$s/index.yaml: the restored site is incomplete and deploying it would remove suite $s; restore the site (the kbuild-site-* cache of the last run) and run again" >&2
			return 1
		fi
	done
}

# follow brings each suite's followable OCI repositories (what Flux, Argo
# CD and Helm clusters follow: REPO/suites/SUITE/CHART) to the suite's
# signed index: after every publish (the weekly re-signing included) and
# promotion ('kbuild repo follow').
follow() {
	[ -f "$SUITES" ] || return 0
	"$KBUILD" repo follow --site "$SITE" --suites "$SUITES" --public-key "${KBUILD_TRUST_KEY:-keys/index.pub}" "${plain[@]}"
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
	names=$(suites)
	first=${names%%$'\n'*}
	written="$SITE/index.yaml"
	index=""
	if [ -n "$first" ]; then
		grep -q "^rootSuite: *$first *$" "$SUITES" || {
			echo "error: $SUITES: add 'rootSuite: $first' so that ${PAGES_URL%/}/index.yaml stays the index its subscribers read" >&2
			exit 1
		}
		# The first suite is the one written: publish fetches what it lacks
		# from Pages. The others it cannot.
		# shellcheck disable=SC2046 # suite names are DNS labels
		check_suites $(tail -n +2 <<<"$names")
		written="$SITE/$first/index.yaml"
		index=$(published_at "$first/index.yaml")
	fi
	[ -n "$index" ] || index=$(published_index) # fails on anything but 200 and 404
	merge=(--index "${index:-${PAGES_URL%/}/index.yaml}" --public-key "${KBUILD_TRUST_KEY:-keys/index.pub}")
	[ -n "$index" ] || merge+=(--allow-new)
	root=()
	[ -f "$ROOT" ] && root=(--root "$ROOT")
	keyless=()
	[ "${KBUILD_KEYLESS:-false}" = true ] && keyless=(--keyless)
	# The records of the build jobs are the output directory: publish
	# indexes them with its own (it rebuilds what the published index lacks,
	# reusing the charts the build jobs pushed, to sign their provenance).
	"$KBUILD" publish "$RECIPES/" --registry "$KBUILD_REGISTRY" --sign-key-env KBUILD_SIGN_KEY \
		--site "$SITE" --suites "$SUITES" -o "$records" --cache-dir "$CACHE" "${merge[@]}" "${root[@]}" "${keyless[@]}" "${plain[@]}"
	"$(dirname "$0")/check-anonymous-pull.sh" "$written"
	# The later suites change only by promotion; re-sign them here, the
	# weekly run included, so that they do not expire. Nothing is rebuilt:
	# the verified index is signed again with a fresh expiry.
	empty=$(mktemp -d)
	for s in $(tail -n +2 <<<"$names"); do
		[ -f "$SITE/$s/index.yaml" ] || continue
		trust=(--public-key "${KBUILD_TRUST_KEY:-keys/index.pub}")
		[ -f "$ROOT" ] && trust=(--index-root "$ROOT")
		log "re-signing suite $s"
		"$KBUILD" repo index "$empty" -o "$SITE/$s/index.yaml" --index "$SITE/$s/index.yaml" "${trust[@]}" --sign-key-env KBUILD_SIGN_KEY
	done
	rmdir "$empty"
	follow
	;;
promote)
	what=${1:?usage: publish.sh promote NAME@VERSION BUILD SUITE}
	build=${2:?usage: publish.sh promote NAME@VERSION BUILD SUITE}
	to=${3:?usage: publish.sh promote NAME@VERSION BUILD SUITE}
	: "${KBUILD_SIGN_KEY:?set KBUILD_SIGN_KEY to the PEM private key that signs the index}"
	: "${PAGES_URL:?set PAGES_URL to where the site is served, e.g. https://OWNER.github.io/REPO}"
	[ -f "$ROOT" ] || { echo "error: $ROOT: no root of trust; promote checks evidence against its qa role (see CONTRIBUTING.md)" >&2; exit 1; }
	names=$(suites)
	[ -n "$names" ] || { echo "error: no suites file $SUITES: a repository without suites has nothing to promote into" >&2; exit 1; }
	# shellcheck disable=SC2086 # suite names are DNS labels
	check_suites $names
	# The restored site must be what Pages serves, or the promotion would
	# deploy an old state of the other suites.
	for s in $names; do
		url=$(published_at "$s/index.yaml")
		[ -n "$url" ] || continue
		if ! curl -sS "$url" | cmp -s - "$SITE/$s/index.yaml"; then
			echo "error: $SITE/$s/index.yaml is not the index Pages serves at $url: the restored site is out of date (a publish may be running); run again once it is done" >&2
			exit 1
		fi
	done
	allow=()
	[ -n "$(published_at "$to/index.yaml")" ] || allow=(--allow-new)
	"$KBUILD" promote "$what" --build "$build" --to "$to" --root "$ROOT" --site "$SITE" --suites "$SUITES" --sign-key-env KBUILD_SIGN_KEY "${allow[@]}"
	"$(dirname "$0")/check-anonymous-pull.sh" "$SITE/$to/index.yaml"
	follow
	;;
*)
	echo "usage: publish.sh plan | build RECIPE_DIR... | publish RECORDS_DIR | promote NAME@VERSION BUILD SUITE" >&2
	exit 2
	;;
esac
