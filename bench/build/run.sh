#!/usr/bin/env bash
# Build+push the same 20 generated charts with kbuild, and with
# `helm package` + `helm push`, into one local registry; print both wall
# times, the CPU time (user+sys, children included) of each, and the
# ratios. Results go into bench/README.md by hand.
#
#   bench/build/run.sh            # starts its own docker-registry on loopback
#   REGISTRY=127.0.0.1:5000 bench/build/run.sh
#   KEEP=1 bench/build/run.sh     # keep the work dir (recipes, kbuild) to profile
set -euo pipefail
cd "$(dirname "$0")/../.."
TOOLS=${KBUILD_TOOLS:-$HOME/.cache/kbuild-tools/bin}
helm=${HELM:-$TOOLS/helm}
N=${N:-20}
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; if [ -n "${KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi' EXIT

if [ -z "${REGISTRY:-}" ]; then
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	printf 'version: 0.1\nlog: {level: error, accesslog: {disabled: true}}\nstorage: {filesystem: {rootdirectory: %s/reg}}\nhttp: {addr: 127.0.0.1:%s}\n' "$work" "$port" >"$work/reg.yml"
	docker-registry serve "$work/reg.yml" >/dev/null 2>&1 &
	pid=$!
	REGISTRY=127.0.0.1:$port
	until curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1; do sleep 0.2; done
fi

CGO_ENABLED=0 go build -o "$work/kbuild" ./cmd/kbuild

# N recipes, each a local chart with 30 templates of realistic size.
for i in $(seq -w 1 "$N"); do
	d="$work/recipes/pkg$i"
	mkdir -p "$d/chart/templates"
	printf 'apiVersion: v2\nname: pkg%s\nversion: 1.0.0\n' "$i" >"$d/chart/Chart.yaml"
	printf 'replicas: 1\n' >"$d/chart/values.yaml"
	for t in $(seq 1 30); do
		{
			printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%s-%s\ndata:\n' "$i" "$t"
			for k in $(seq 1 60); do printf '  key%s: "value %s of template %s in chart %s, with some text to compress"\n' "$k" "$k" "$t" "$i"; done
		} >"$d/chart/templates/cm$t.yaml"
	done
	cat >"$d/recipe.yaml" <<YAML
apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: pkg$i
  annotations: {kubepkg.dev/description: "benchmark package $i"}
spec:
  version: 1.0.0
  build: 1
  sources:
    chart: {dir: chart}
  charts:
    pkg$i: {from: [chart]}
  package:
    rollback: {safe: true}
    variants:
      - name: default
        components: [{name: main, path: pkg$i}]
YAML
done

now() { date +%s.%N; }
export HELM_CONFIG_HOME="$work/helm-config" HELM_CACHE_HOME="$work/helm-cache"

t0=$(now)
/usr/bin/time -f '%U %S' -o "$work/kbuild.cpu" \
	"$work/kbuild" build "$work/recipes" --registry "oci://$REGISTRY/kbuild-bench-$$" --plain-http -o "$work/dist" --cache-dir "$work/cache" >/dev/null
t1=$(now)
mkdir -p "$work/pkgs"
export helm work REGISTRY
# shellcheck disable=SC2016 # expanded by the inner bash, from the exported variables
/usr/bin/time -f '%U %S' -o "$work/helm.cpu" bash -c '
	for d in "$work"/recipes/*/chart; do
		"$helm" package "$d" -d "$work/pkgs" >/dev/null
	done
	for p in "$work"/pkgs/*.tgz; do
		"$helm" push "$p" "oci://$REGISTRY/helm-bench-'$$'" --plain-http >/dev/null 2>&1
	done'
t2=$(now)

python3 - "$t0" "$t1" "$t2" "$N" "$work/kbuild.cpu" "$work/helm.cpu" <<'PY'
import sys
t0, t1, t2, n = map(float, sys.argv[1:5])
kc, hc = (sum(map(float, open(f).read().split()[-2:])) for f in sys.argv[5:7])
k, h = t1 - t0, t2 - t1
print(f"charts: {int(n)}")
print(f"kbuild build+push: {k:.2f} s wall, {kc:.2f} s CPU")
print(f"helm package+push: {h:.2f} s wall, {hc:.2f} s CPU")
print(f"ratio kbuild/helm: {k/h:.2f} wall, {kc/hc:.2f} CPU")
PY
