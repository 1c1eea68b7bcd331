#!/usr/bin/env bash
# One cell of the qualify workflow's matrix (.github/workflows/qualify.yml):
# kbuild test of every target of the plan on the cluster of $KUBECONFIG
# (a kind cluster in CI), each signed as evidence with the qa key into
# $OUT/evidence/NAME-VERSION-BUILD/$CELL.intoto.json, with JUnit and
# the whole log beside. A test that fails is signed too (result fail) and
# the others still run; the script exits 1 when any failed, 5 when the
# cluster or registry stopped answering (no evidence for that one).
#
# Environment:
#   TARGETS            the plan: one "NAME@VERSION BUILD" a line (required)
#   CELL               this cell's name, the evidence file's (required),
#                      e.g. kind-1.37-amd64
#   KBUILD_INDEX       the first suite's index (required)
#   KBUILD_TRUST_KEY   its public key (default keys/index.pub)
#   KBUILD_QA_KEY      the qa role's private key, PEM (required)
#   KBUILD_ROOT        root.yaml with the qa role (default keys/root.yaml)
#   KUBECONFIG         the cluster
#   OUT                where evidence/, junit/ and logs/ go (default qualify-out)
#   LOG_URL            the run's URL, written into the evidence
#   KBUILD, KBUILD_PLAIN_HTTP as for qualify-plan.sh
set -euo pipefail

: "${TARGETS?set TARGETS to the plan}" "${CELL:?set CELL to the matrix cell}" "${KBUILD_INDEX:?}" "${KBUILD_QA_KEY:?the qa key}"
KBUILD=${KBUILD:-kbuild}
OUT=${OUT:-qualify-out}
flags=(--index "$KBUILD_INDEX" --public-key "${KBUILD_TRUST_KEY:-keys/index.pub}"
	--attest --sign-key-env KBUILD_QA_KEY --root "${KBUILD_ROOT:-keys/root.yaml}")
[ -n "${KUBECONFIG:-}" ] && flags+=(--kubeconfig "$KUBECONFIG")
[ -n "${LOG_URL:-}" ] && flags+=(--log "$LOG_URL")
[ "${KBUILD_PLAIN_HTTP:-}" = 1 ] && flags+=(--plain-http)
mkdir -p "$OUT/junit" "$OUT/logs"

status=0
while read -r target build; do
	[ -n "$target" ] || continue
	key="${target%@*}-${target#*@}-$build"
	mkdir -p "$OUT/evidence/$key"
	printf '==> kbuild test %s build %s (%s)\n' "$target" "$build" "$CELL" >&2
	rc=0
	"$KBUILD" test "$target" --build "$build" "${flags[@]}" \
		--junit "$OUT/junit/$key-$CELL.xml" --log-file "$OUT/logs/$key-$CELL.log" \
		-o "$OUT/evidence/$key/$CELL.intoto.json" || rc=$?
	case $rc in
	0) ;;
	1) status=1 ;;
	*)
		rmdir "$OUT/evidence/$key" 2>/dev/null || true
		status=$rc
		;;
	esac
done <<<"$TARGETS"
exit "$status"
