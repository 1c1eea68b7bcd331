#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine with Go: installs what the
# tests need (Debian packages, the helm and trivy CLIs, cached outside the
# clone), starts a real OCI registry on 127.0.0.1, runs `go test ./...` and
# stops what it started.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh ./builder/...   # only some packages (go test arguments)
#
# KBUILD_TOOLS (default ~/.cache/kbuild-tools/bin) caches the Go-built tools
# (the linters' too: scripts/lint.sh, which the full run calls).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

. scripts/tools.sh
HELM_VERSION=v3.22.0
HELM4_VERSION=v4.3.2 # Helm 4, the current major, beside Helm 3 (security fixes only until 2027-02-10)
TRIVY_VERSION=v0.74.0
ACTIONLINT_VERSION=v1.7.7
CRANE_VERSION=v0.22.1 # go-containerregistry, as go.mod has it
ORAS_VERSION=v1.3.6
COSIGN_VERSION=v3.1.3 # the judge of the charts' Sigstore bundles (sigbundle)
KO_VERSION=v0.19.1 # kbuild's image (scripts/release.sh image)

# 1. Debian packages: the registry, skopeo, git (git daemon), chromium and gcc.
pkgs=()
command -v docker-registry >/dev/null || pkgs+=(docker-registry)
command -v skopeo >/dev/null || pkgs+=(skopeo)
command -v git >/dev/null || pkgs+=(git)
command -v chromium >/dev/null || pkgs+=(chromium)
command -v xz >/dev/null || pkgs+=(xz-utils)
command -v shellcheck >/dev/null || pkgs+=(shellcheck)
command -v gcc >/dev/null || pkgs+=(gcc) # TestCgoStartsUnderLimit builds kbuild with cgo
if ((${#pkgs[@]})); then
	log "installing Debian packages: ${pkgs[*]}"
	sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi
# The Debian package may start its own registry on :5000; ours runs on its own port.

# 2. Go-built tools, cached in $TOOLS and reused (scripts/tools.sh).
tool helm helm.sh/helm/v3/cmd/helm "$HELM_VERSION" "about 4 minutes, once"
tool helm4 helm.sh/helm/v4/cmd/helm "$HELM4_VERSION" "about 4 minutes, once"
GOEXPERIMENT=jsonv2 tool trivy github.com/aquasecurity/trivy/cmd/trivy "$TRIVY_VERSION" "about 12 minutes, once"
tool crane github.com/google/go-containerregistry/cmd/crane "$CRANE_VERSION"
tool oras oras.land/oras/cmd/oras "$ORAS_VERSION"
tool actionlint github.com/rhysd/actionlint/cmd/actionlint "$ACTIONLINT_VERSION"
tool cosign github.com/sigstore/cosign/v3/cmd/cosign "$COSIGN_VERSION" "about 10 minutes, once"
tool ko github.com/google/ko "$KO_VERSION" "about 3 minutes, once"
# kcp: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok in
# one binary (tools/controlplane, its own module), for the cluster tests
# of 'kbuild test'; rebuilt when that directory changes.
kcp_version=$(cat tools/controlplane/go.mod tools/controlplane/go.sum tools/controlplane/*.go tools/controlplane/build.sh | sha256sum | cut -c1-16)
if [ ! -x "$TOOLS/kcp" ] || [ "$(cat "$TOOLS/.kcp.version" 2>/dev/null)" != "$kcp_version" ]; then
	log "building kcp, the test control plane (k8s.io/kubernetes $(grep -m1 'k8s.io/kubernetes v' tools/controlplane/go.mod | awk '{print $2}'); about 13 minutes of 2 idle cores, once)"
	tools/controlplane/build.sh "$TOOLS/kcp.tmp"
	mv -f "$TOOLS/kcp.tmp" "$TOOLS/kcp"
	echo "$kcp_version" >"$TOOLS/.kcp.version"
fi

# kbuild is pure Go: the tests build and run what users get (README).
export CGO_ENABLED=0

# 3. A real registry on loopback, on a free port, with throwaway storage.
work=$(mktemp -d)
registry_pid=""
cleanup() {
	local rc=$?
	# Tests skipped for want of the upstream fixtures (testenv.Upstream,
	# testenv.MissingFixture); under CI=true they fail instead.
	if [ -s "${KBUILD_TEST_OUTPUT:-}/skipped-fixtures.txt" ]; then
		log "skipped for want of fixtures (run scripts/fetch-fixtures.sh to fetch them by pinned digest into ${KBUILD_FIXTURES:-~/.cache/kbuild-fixtures}, or put the shared fixtures beside the repository as ../shared):"
		sort -u "$KBUILD_TEST_OUTPUT/skipped-fixtures.txt" | sed 's/^/    /' >&2
	fi
	if [ -n "$registry_pid" ]; then
		kill "$registry_pid" 2>/dev/null || true
		wait "$registry_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 5055)
cat >"$work/registry.yml" <<YAML
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: $work/registry}
  delete: {enabled: true}
http: {addr: 127.0.0.1:$port}
YAML
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 1 50); do
	curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1 && break
	sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null || { cat "$work/registry.log" >&2; echo "registry did not start" >&2; exit 1; }
log "registry on 127.0.0.1:$port"

# 4. The tests. KBUILD_E2E=1 makes a missing prerequisite fail, not skip.
export KBUILD_E2E=1 KBUILD_TEST_REGISTRY="127.0.0.1:$port" KBUILD_TOOLS="$TOOLS"
export KBUILD_TEST_OUTPUT="${KBUILD_TEST_OUTPUT:-$root/.cache/test-output}"
mkdir -p "$KBUILD_TEST_OUTPUT"
rm -f "$KBUILD_TEST_OUTPUT/skipped-fixtures.txt"
if (($#)); then
	go test -count=1 "$@"
else
	go vet ./...
	# The linters (staticcheck, go-errorlint, revive), built once into $TOOLS.
	bash scripts/lint.sh
	go test -count=1 -timeout 20m ./...
	# 5. The hostile corpus: every case refused (or completed) within 1 GiB
	# of address space and 30 s, without a crash (scripts/hostile).
	log "hostile corpus (ulimit -v 1 GiB, 30 s per case)"
	CGO_ENABLED=0 go build -o "$work/kbuild" ./cmd/kbuild
	go run ./scripts/hostile -kbuild "$work/kbuild" -mem $((1 << 30)) -deadline 30s
fi
