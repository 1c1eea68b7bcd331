#!/usr/bin/env bash
# Hashing throughput: kbuild's streaming sha256 (the function the source
# cache hashes and re-verifies every blob with) against sha256sum, on the
# same generated file (512 MiB by default; SIZE_MIB to change), read from
# the page cache. The file is made under /tmp and removed afterwards.
#
#   bench/hash/run.sh              # 512 MiB, 3 runs each
#   SIZE_MIB=64 RUNS=1 bench/hash/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
size_mib=${SIZE_MIB:-512}
runs=${RUNS:-3}
file=$(mktemp /tmp/kbuild-hash-bench.XXXXXX)
trap 'rm -f "$file"' EXIT

head -c $((size_mib << 20)) /dev/urandom >"$file"
cat "$file" >/dev/null # warm the page cache for both

echo "file: $size_mib MiB, $(nproc) CPUs, $(go version | cut -d' ' -f3)"
best=0
for _ in $(seq "$runs"); do
	start=$(date +%s.%N)
	sha256sum "$file" >/dev/null
	end=$(date +%s.%N)
	mibs=$(echo "$size_mib / ($end - $start)" | bc -l)
	best=$(echo "if ($mibs > $best) $mibs else $best" | bc -l)
done
printf 'sha256sum:            %8.1f MiB/s (best of %d)\n' "$best" "$runs"

KBUILD_BENCH_FILE="$file" go test -run '^$' -bench '^BenchmarkHash$' -benchtime "${runs}x" -count 1 ./sources/ |
	awk '/^BenchmarkHash/ {
		name = substr($1, 15); sub(/-[0-9]+$/, "", name)
		for (i = 1; i <= NF; i++) if ($(i) == "MB/s") printf "kbuild %-14s %8.1f MiB/s\n", name ":", $(i-1) * 1e6 / 1048576
	}'
