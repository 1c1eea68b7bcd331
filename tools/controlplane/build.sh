#!/usr/bin/env bash
# Builds kcp (this directory's module) into $1, stamped with the
# Kubernetes release go.mod pins, as the release's own binaries report it.
# scripts/test.sh runs it once per change of this directory.
set -euo pipefail
cd "$(dirname "$0")"
out=$1
k8s=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=${k8s#v1.}
minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$k8s -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags="$ldflags" -o "$out" .
