#!/usr/bin/env bash
# Air-gap bundle: `kbuild bundle create` + `kbuild bundle import` of SIZE
# bytes of generated images between two local docker-registries, against
# `skopeo copy` of the same images between the same registries. Prints wall
# times, throughput and peak RSS (from /usr/bin/time -v). Results go into
# bench/README.md by hand.
#
#   bench/bundle/run.sh                 # 1 GiB in 8 images of 4 layers
#   SIZE=268435456 bench/bundle/run.sh  # 256 MiB, to compare peak RSS
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZE=${SIZE:-1073741824}
IMAGES=${IMAGES:-8}
LAYERS=${LAYERS:-4}
work=$(mktemp -d)
pids=()
# shellcheck disable=SC2154 # p is the trap's own loop variable
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

start_registry() { # NAME -> prints host:port
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	printf 'version: 0.1\nlog: {level: error, accesslog: {disabled: true}}\nstorage: {filesystem: {rootdirectory: %s/%s}}\nhttp: {addr: 127.0.0.1:%s}\n' "$work" "$1" "$port" >"$work/$1.yml"
	docker-registry serve "$work/$1.yml" >/dev/null 2>&1 &
	pids+=($!)
	until curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1; do sleep 0.2; done
	echo "127.0.0.1:$port"
}
SRC=$(start_registry src)
MIRROR=$(start_registry mirror)
SKOPEO_DST=$(start_registry skopeo)

CGO_ENABLED=0 go build -o "$work/kbuild" ./cmd/kbuild
echo "generating $SIZE bytes of images in $SRC" >&2
go run ./bench/bundle -registry "$SRC" -site "$work/site" -images "$IMAGES" -layers "$LAYERS" -size "$SIZE" >"$work/refs"

measure() { # LABEL CMD... -> "LABEL wall_s rss_kib"
	local label=$1
	shift
	/usr/bin/time -v -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$work/time")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
	echo "$label $wall $rss"
}

create=$(measure create "$work/kbuild" bundle create bench --index "$work/site" --public-key "$work/site/index.pub" \
	--image-source "oci://$SRC" --plain-http -o "$work/bench.tar")
import=$(measure import "$work/kbuild" bundle import "$work/bench.tar" --public-key "$work/site/index.pub" \
	--mirror "oci://$MIRROR/airgap" --site "$work/imported" --plain-http)
# skopeo copies the same images between the same kind of registries, one by one.
{
	echo '#!/usr/bin/env bash'
	echo 'set -e'
	while read -r ref; do
		repo=${ref%%:*}; tag=${ref#*:}; tag=${tag%%@*}; digest=${ref#*@}
		echo "skopeo copy -q --src-tls-verify=false --dest-tls-verify=false docker://$SRC/$repo@$digest docker://$SKOPEO_DST/airgap/$repo:$tag"
	done <"$work/refs"
} >"$work/skopeo.sh"
chmod +x "$work/skopeo.sh"
skopeo=$(measure skopeo "$work/skopeo.sh")

mib=$(awk -v s="$SIZE" 'BEGIN {printf "%.0f", s/1048576}')
echo "images: $mib MiB in $IMAGES images x $LAYERS layers; bundle $(du -m "$work/bench.tar" | cut -f1) MiB"
for line in "$create" "$import" "$skopeo"; do
	# shellcheck disable=SC2086 # split into its three fields on purpose
	set -- $line
	awk -v l="$1" -v w="$2" -v r="$3" -v m="$mib" 'BEGIN {printf "%-7s %7.2f s %7.1f MiB/s  peak RSS %6.1f MiB\n", l, w, m/w, r/1024}'
done
c=$(echo "$create" | cut -d' ' -f2); i=$(echo "$import" | cut -d' ' -f2); s=$(echo "$skopeo" | cut -d' ' -f2)
awk -v c="$c" -v i="$i" -v s="$s" 'BEGIN {printf "throughput vs skopeo copy: create %.2fx, import %.2fx, create+import %.2fx\n", s/c, s/i, s/(c+i)}'
