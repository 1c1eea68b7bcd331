#!/usr/bin/env bash
# The plan of the qualify workflow (.github/workflows/qualify.yml): the
# builds of the published first suite that the repository's evidence/ has
# no evidence for (kbuild test --untested; a release set's members are
# tested with the set). Writes the step outputs "count" and "targets" (one
# "NAME@VERSION BUILD" a line) to $GITHUB_OUTPUT, and the list to the job
# summary.
#
# Run it from the root of the recipes repository. Environment:
#   KBUILD_INDEX       the first suite's index (URL or directory; required)
#   KBUILD_TRUST_KEY   its public key (default keys/index.pub)
#   EVIDENCE           the committed evidence (default evidence)
#   KBUILD             the kbuild binary (default kbuild)
#   KBUILD_PLAIN_HTTP  1 to talk plain HTTP to registries on loopback
#   GITHUB_OUTPUT, GITHUB_STEP_SUMMARY  (default: stdout, nowhere)
set -euo pipefail

: "${KBUILD_INDEX:?set KBUILD_INDEX to the index of the first suite}"
KBUILD=${KBUILD:-kbuild}
OUTPUT=${GITHUB_OUTPUT:-/dev/stdout}
SUMMARY=${GITHUB_STEP_SUMMARY:-/dev/null}
flags=(--index "$KBUILD_INDEX" --public-key "${KBUILD_TRUST_KEY:-keys/index.pub}")
[ "${KBUILD_PLAIN_HTTP:-}" = 1 ] && flags+=(--plain-http)

targets=$("$KBUILD" test --untested "${EVIDENCE:-evidence}" "${flags[@]}")
count=$(grep -c . <<<"$targets" || true)
{
	echo "count=$count"
	echo "targets<<KBUILD_TARGETS"
	[ -z "$targets" ] || echo "$targets"
	echo "KBUILD_TARGETS"
} >>"$OUTPUT"
{
	echo "## Builds to qualify: $count"
	echo
	while read -r line; do
		[ -z "$line" ] || echo "- $line"
	done <<<"$targets"
} >>"$SUMMARY"
printf '==> %s build(s) without evidence\n' "$count" >&2
