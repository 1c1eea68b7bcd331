#!/bin/sh
# Build every recipe and index the results, as kubepkg-recipes does.
#   REGISTRY=oci://127.0.0.1:5000/packages scripts/build-all.sh
set -eu
cd "$(dirname "$0")/.."
: "${REGISTRY:?set REGISTRY to oci://HOST/PATH}"
KUBEPKG=${KUBEPKG:-kubepkg}
rm -rf dist work
mkdir -p dist site
for r in recipes/*/; do
	"$KUBEPKG" build "$r" --registry "$REGISTRY" -o dist --plain-http \
		--work-dir work --registry-config "${REGISTRY_CONFIG:-$HOME/.docker/config.json}" \
		--cache-dir "${CACHE_DIR:-.cache}"
done
"$KUBEPKG" repo index dist -o site/index.yaml --plain-http --verify
