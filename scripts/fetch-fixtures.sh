#!/usr/bin/env bash
# Fetches the upstream files the fixture tests read (scripts/fixtures.txt:
# one file a line, pinned by sha256) into the fixture cache, where the
# tests find them (internal/testenv.Upstream). Each download is checked
# against its pin before it is put in place: other bytes are refused and
# removed, never used. Files already in the cache with the pinned digest
# are kept. Without network the files that could not be fetched are named
# and the script fails; the tests that need them keep skipping (or, under
# CI=true, failing).
#
#   scripts/fetch-fixtures.sh
#
# Environment:
#   KBUILD_FIXTURES          the cache (default ~/.cache/kbuild-fixtures)
#   KBUILD_FIXTURES_MIRROR   a base URL to fetch FILE from instead of its
#                            upstream URL ($MIRROR/FILE): a mirror, or a
#                            loopback server in the script's own test
#   KBUILD_FIXTURES_MANIFEST the list of files (default scripts/fixtures.txt)
set -euo pipefail
cd "$(dirname "$0")/.."

dest=${KBUILD_FIXTURES:-${XDG_CACHE_HOME:-$HOME/.cache}/kbuild-fixtures}
manifest=${KBUILD_FIXTURES_MANIFEST:-scripts/fixtures.txt}
mirror=${KBUILD_FIXTURES_MIRROR:-}
[ -f "$manifest" ] || { echo "error: $manifest: no such file" >&2; exit 1; }
mkdir -p "$dest"

sha256() { sha256sum "$1" | cut -d' ' -f1; }

failed=()
refused=()
sums=""
while read -r want file url; do
	case "$want" in '' | '#'*) continue ;; esac
	if [[ ! "$want" =~ ^[0-9a-f]{64}$ ]] || [[ ! "$file" =~ ^[A-Za-z0-9._+-]+$ ]] || [ -z "$url" ]; then
		echo "error: $manifest: want SHA256 FILE URL, got: $want $file $url" >&2
		exit 1
	fi
	sums+="$want  $file"$'\n'
	if [ -f "$dest/$file" ]; then
		if [ "$(sha256 "$dest/$file")" = "$want" ]; then
			echo "$file: in the cache ($dest)"
			continue
		fi
		rm -f "$dest/$file" # other bytes than the pin: never left for the tests
	fi
	from=$url
	[ -z "$mirror" ] || from="${mirror%/}/$file"
	tmp=$(mktemp "$dest/.$file.XXXXXX")
	if ! curl -fsSL --retry 2 --connect-timeout 20 --max-time 300 -o "$tmp" "$from"; then
		rm -f "$tmp"
		echo "$file: could not fetch $from" >&2
		failed+=("$file")
		continue
	fi
	got=$(sha256 "$tmp")
	if [ "$got" != "$want" ]; then
		rm -f "$tmp"
		echo "$file: refused: $from has sha256 $got, the pin in $manifest is $want; upstream changed the file (or the mirror serves another), so nothing was kept" >&2
		refused+=("$file")
		continue
	fi
	chmod 0444 "$tmp"
	mv -f "$tmp" "$dest/$file"
	echo "$file: fetched from $from, sha256 $want"
done <"$manifest"

# SHA256SUMS as ../shared/fixtures/upstream has it: the tests read it.
printf '%s' "$sums" >"$dest/.SHA256SUMS.tmp"
mv -f "$dest/.SHA256SUMS.tmp" "$dest/SHA256SUMS"

if ((${#refused[@]})); then
	echo "error: refused (digest mismatch): ${refused[*]}" >&2
fi
if ((${#failed[@]})); then
	echo "error: could not fetch (no network?): ${failed[*]}; the tests that need them skip (fail under CI=true)" >&2
fi
if ((${#refused[@]} + ${#failed[@]})); then
	exit 1
fi
echo "fixtures in $dest; the tests read them from there (KBUILD_FIXTURES)"
