#!/usr/bin/env bash
# Builds kbuild's release archives reproducibly: the same source, VERSION
# and SOURCE_DATE_EPOCH give the same bytes on any machine.
#
#   scripts/release.sh v0.3.0 [OUT]     # archives; OUT defaults to dist/release
#   scripts/release.sh image v0.3.0     # the image, with ko, to $KO_DOCKER_REPO
#
# For each of linux and darwin on amd64 and arm64: a static binary
# (CGO_ENABLED=0, -trimpath, no build ID, the release and commit stamped
# with -ldflags -X) packed with README.md and CONTRIBUTING.md into
# kbuild_VERSION_OS_ARCH.tar.gz (names sorted, owner 0:0, every mtime
# SOURCE_DATE_EPOCH, gzip without a name or time); then SHA256SUMS of the
# archives. SOURCE_DATE_EPOCH defaults to the commit's time.
# KBUILD_RELEASE_TARGETS (OS/ARCH words) builds only some targets (the
# tests build this machine's).
#
# "image" builds the linux/amd64 and linux/arm64 image with ko (.ko.yaml:
# the same flags, on $KO_DEFAULTBASEIMAGE, which the release workflow pins
# by digest), pushes it to $KO_DOCKER_REPO by digest only (no tag; the
# workflow tags it) and prints its reference, REPO@sha256:…. The release
# workflow (.github/workflows/release.yml) runs both and attests what they
# made.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = image ]; then
	version=${2:?usage: scripts/release.sh image VERSION}
	: "${KO_DOCKER_REPO:?set KO_DOCKER_REPO to the image repository, e.g. ghcr.io/OWNER/kbuild}"
	KBUILD_VERSION=$version
	KBUILD_COMMIT=${KBUILD_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
	SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
	export KBUILD_VERSION KBUILD_COMMIT SOURCE_DATE_EPOCH
	export KO_DATA_DATE_EPOCH=$SOURCE_DATE_EPOCH GOFLAGS=-buildvcs=false
	exec ko build ./cmd/kbuild --bare --push --sbom=none --platform="${KBUILD_PLATFORMS:-linux/amd64,linux/arm64}"
fi

version=${1:?usage: scripts/release.sh VERSION [OUT]}
out=${2:-dist/release}
case "$version" in
v[0-9]*) ;;
*) echo "release.sh: VERSION must look like v1.2.3, got $version" >&2; exit 2 ;;
esac
commit=${KBUILD_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH

mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ldflags="-s -w -buildid= -X main.release=$version -X main.commit=$commit"
for target in ${KBUILD_RELEASE_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}; do
	os=${target%/*} arch=${target#*/}
	name="kbuild_${version#v}_${os}_${arch}"
	mkdir -p "$work/$name"
	chmod 0755 "$work/$name"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOFLAGS=-buildvcs=false \
		go build -trimpath -ldflags "$ldflags" -o "$work/$name/kbuild" ./cmd/kbuild
	cp README.md CONTRIBUTING.md "$work/$name/"
	chmod 0755 "$work/$name/kbuild"
	chmod 0644 "$work/$name/README.md" "$work/$name/CONTRIBUTING.md"
	tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
		--format=ustar -C "$work" -cf - "$name" | gzip -9n >"$out/$name.tar.gz"
done

(cd "$out" && find . -maxdepth 1 -name 'kbuild_*.tar.gz' -printf '%f\n' | LC_ALL=C sort | xargs sha256sum >SHA256SUMS)
cat "$out/SHA256SUMS"
