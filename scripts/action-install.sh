#!/usr/bin/env bash
# Installs kbuild for the GitHub Action (action.yml) and prints the
# directory it is in. With KBUILD_VERSION a release (vX.Y.Z): downloads
# that release's archive for this runner and SHA256SUMS, refuses an
# archive whose sha256 is not the one SHA256SUMS lists (exit 4), and
# unpacks kbuild into DEST; a kbuild already in DEST at that version is
# kept (the tool cache). Otherwise (a branch or commit, or "checkout":
# this repository's own workflows, through the reusable workflows'
# kbuild-version input) builds kbuild from the action's source, CGO_ENABLED=0.
#
#   KBUILD_VERSION=v0.3.0 scripts/action-install.sh DEST
#
# KBUILD_RELEASES is where releases are downloaded from (default
# https://github.com/kbuild-dev/kbuild/releases/download; the tests serve
# scripts/release.sh's output on loopback).
set -euo pipefail

dest=${1:?usage: scripts/action-install.sh DEST}
version=${KBUILD_VERSION:-}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dest"

case "$version" in
v[0-9]*) ;;
*)
	echo "kbuild ${version:-(no version)}: building from $src" >&2
	(cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$dest/kbuild" ./cmd/kbuild)
	echo "$dest"
	exit 0
	;;
esac

if [ -x "$dest/kbuild" ] && [ "$("$dest/kbuild" version | head -n 1)" = "kbuild $version" ]; then
	echo "kbuild $version: cached in $dest" >&2
	echo "$dest"
	exit 0
fi

os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$(uname -m)" in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) echo "kbuild: no release for $(uname -m)" >&2; exit 1 ;;
esac
name="kbuild_${version#v}_${os}_${arch}"
base=${KBUILD_RELEASES:-https://github.com/kbuild-dev/kbuild/releases/download}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
curl -fsSL --retry 3 --max-time 300 -o "$tmp/$name.tar.gz" "$base/$version/$name.tar.gz"
curl -fsSL --retry 3 --max-time 60 -o "$tmp/SHA256SUMS" "$base/$version/SHA256SUMS"
want=$(awk -v f="$name.tar.gz" '$2 == f { print $1 }' "$tmp/SHA256SUMS")
got=$(sha256sum "$tmp/$name.tar.gz" | cut -d' ' -f1)
if [ -z "$want" ] || [ "$want" != "$got" ]; then
	echo "::error::kbuild $version: $name.tar.gz has sha256 $got, but SHA256SUMS lists ${want:-nothing}; not installed" >&2
	exit 4
fi
tar -xzf "$tmp/$name.tar.gz" -C "$tmp"
install -m 0755 "$tmp/$name/kbuild" "$dest/kbuild"
echo "kbuild $version: installed into $dest (sha256 $got)" >&2
echo "$dest"
