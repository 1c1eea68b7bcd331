#!/usr/bin/env bash
# kbuild outdated over 100 recipes against upstreams on loopback (Helm
# index, GitHub-style releases with Link pages, HTTP listings, git daemon,
# a docker-registry), all look-ups concurrent; kbuild's start-up (kbuild
# version) is measured apart. Results go into bench/README.md by hand.
#
#   bench/outdated/run.sh            # 5 runs of each
#   RUNS=10 bench/outdated/run.sh
#   bench/outdated/run.sh -kinds git   # one kind of upstream alone
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'version: 0.1\nlog: {level: error, accesslog: {disabled: true}}\nstorage: {filesystem: {rootdirectory: %s/registry}}\nhttp: {addr: 127.0.0.1:%s}\n' "$work" "$port" >"$work/registry.yml"
docker-registry serve "$work/registry.yml" >/dev/null 2>&1 &
pid=$!
until curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1; do sleep 0.2; done
CGO_ENABLED=0 go build -o "$work/kbuild" ./cmd/kbuild
go run ./bench/outdated -kbuild "$work/kbuild" -registry "127.0.0.1:$port" -runs "${RUNS:-5}" "$@"
