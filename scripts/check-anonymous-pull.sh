#!/usr/bin/env bash
# Pulls every chart that an index pins, without credentials, as a
# subscribing cluster would, and checks each archive against its pinned
# digest. Run after publishing: a package left private (GHCR makes a new
# package private unless its visibility is changed once) or a tag that does
# not hold the pinned archive fails here, not on the subscribers.
#
#   scripts/check-anonymous-pull.sh _site/index.yaml
#
# Environment: HELM (the helm binary, default helm), KBUILD_PLAIN_HTTP=1 to
# talk plain HTTP to a registry on loopback (tests).
#
# It reads the index as kbuild writes it (keys sorted, two-space indent):
# each component's "chart:" map of digest, name, repository and version.
set -euo pipefail

index=${1:?usage: check-anonymous-pull.sh INDEX_YAML}
[ -f "$index" ] || { echo "error: $index: no such file; publish writes it into the site directory" >&2; exit 1; }
HELM=${HELM:-helm}
command -v "$HELM" >/dev/null || { echo "error: helm not found; install it or set HELM" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# No credentials anywhere helm or the Docker credential helpers look.
export HOME="$tmp/home" DOCKER_CONFIG="$tmp/docker" XDG_CONFIG_HOME="$tmp/config"
export HELM_CONFIG_HOME="$tmp/helm/config" HELM_CACHE_HOME="$tmp/helm/cache" HELM_DATA_HOME="$tmp/helm/data"
export HELM_REGISTRY_CONFIG="$tmp/helm/registry.json"
unset REGISTRY_AUTH_FILE
mkdir -p "$HOME" "$DOCKER_CONFIG"

plain=()
[ "${KBUILD_PLAIN_HTTP:-}" = 1 ] && plain=(--plain-http)

# One line per distinct chart: repository name version digest.
awk '
function unquote(s) { gsub(/^["\047]|["\047]$/, "", s); return s }
function flush() {
	if (repo != "" && name != "" && version != "" && digest != "") print repo, name, version, digest
	inchart = 0; repo = name = version = digest = ""
}
{
	match($0, /^ */); indent = RLENGTH; line = substr($0, indent + 1)
	if (inchart && indent <= col) flush()
	if (line ~ /^(- )?chart:$/) { inchart = 1; col = indent + (line ~ /^- / ? 2 : 0); next }
	if (!inchart) next
	split(line, kv, ": ")
	if (kv[1] == "repository") repo = unquote(kv[2])
	else if (kv[1] == "name") name = unquote(kv[2])
	else if (kv[1] == "version") version = unquote(kv[2])
	else if (kv[1] == "digest") digest = unquote(kv[2])
}
END { flush() }
' "$index" | sort -u >"$tmp/charts"

total=$(wc -l <"$tmp/charts")
failed=0
n=0
while read -r repo name version digest; do
	n=$((n + 1))
	dir="$tmp/pull/$n"
	mkdir -p "$dir"
	ref="$repo/$name:$version"
	if ! "$HELM" pull "$repo/$name" --version "$version" -d "$dir" "${plain[@]}" >"$tmp/helm.log" 2>&1; then
		echo "error: $ref: anonymous pull failed: $(tr '\n' ' ' <"$tmp/helm.log")" >&2
		echo "  subscribers pull without credentials: make the package public (on GHCR: the package's settings, visibility)" >&2
		failed=$((failed + 1))
		continue
	fi
	got="sha256:$(sha256sum "$dir"/*.tgz | cut -d' ' -f1)"
	if [ "$got" != "$digest" ]; then
		echo "error: $ref: the index pins archive $digest, the registry served $got; the tag was overwritten" >&2
		failed=$((failed + 1))
		continue
	fi
	echo "$ref $digest"
done <"$tmp/charts"

if [ "$failed" -gt 0 ]; then
	echo "$failed of $total charts cannot be pulled anonymously" >&2
	exit 1
fi
echo "all $total charts pulled anonymously and match their digests" >&2
