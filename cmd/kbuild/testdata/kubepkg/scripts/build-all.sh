#!/usr/bin/env bash
# A re-creation of kubepkg-recipes' scripts/build-all.sh, kept to its
# behaviour: every recipe under recipes/ is built; with REGISTRY set, each
# is pushed there and the build records are indexed into OUT/index.yaml,
# merged over the index published so far (BASE_INDEX). The same
# KUBEPKG_FLAGS go to every build and to the index.
#
#   REGISTRY       oci://HOST/PATH to publish to; unset: build only
#   BASE_INDEX     URL or path of the published index to merge over
#   OUT            directory of the written index.yaml (default _site)
#   KUBEPKG        the kubepkg program (default: kubepkg on PATH)
#   KUBEPKG_FLAGS  flags for every build and the index, e.g. --plain-http
#
# With kbuild as KUBEPKG, the index key comes from the environment, not
# from KUBEPKG_FLAGS: KBUILD_SIGN_KEY (a PEM private key, a CI secret)
# signs the index and its public key verifies BASE_INDEX;
# KBUILD_ALLOW_NEW=1 lets the first publish start when BASE_INDEX does
# not exist yet.
set -euo pipefail

cd "$(dirname "$0")/.."
KUBEPKG=${KUBEPKG:-kubepkg}
OUT=${OUT:-_site}
read -r -a FLAGS <<<"${KUBEPKG_FLAGS:-}"
DIST=$(mktemp -d)
trap 'rm -rf "${DIST}"' EXIT

for recipe in recipes/*/; do
	echo "== ${recipe}"
	if [[ -n "${REGISTRY:-}" ]]; then
		"${KUBEPKG}" build "${recipe}" --registry "${REGISTRY}" -o "${DIST}" ${FLAGS[@]+"${FLAGS[@]}"}
	else
		"${KUBEPKG}" build "${recipe}" ${FLAGS[@]+"${FLAGS[@]}"}
	fi
done

if [[ -n "${REGISTRY:-}" ]]; then
	mkdir -p "${OUT}"
	base=()
	if [[ -n "${BASE_INDEX:-}" ]]; then
		base=(--merge "${BASE_INDEX}")
	fi
	"${KUBEPKG}" repo index "${DIST}" ${base[@]+"${base[@]}"} -o "${OUT}/index.yaml" ${FLAGS[@]+"${FLAGS[@]}"}
fi
