# shellcheck shell=bash
# Sourced by scripts/test.sh and scripts/lint.sh: the cache of Go-built
# tools. KBUILD_TOOLS (default ~/.cache/kbuild-tools/bin) holds each tool
# and, beside it, .NAME.version with the version it was built at.
TOOLS=${KBUILD_TOOLS:-$HOME/.cache/kbuild-tools/bin}
mkdir -p "$TOOLS"
export PATH="$TOOLS:$PATH"

log() { printf '==> %s\n' "$*" >&2; }

# tool NAME PACKAGE VERSION [NOTE] runs `go install PACKAGE@VERSION` into
# $TOOLS unless NAME is cached at VERSION. When go install would name the
# binary otherwise (helm.sh/helm/v4/cmd/helm is `helm`), it is built into a
# temporary directory and moved to $TOOLS/NAME, so two majors live side by
# side. Environment for the build goes before the call:
# GOEXPERIMENT=jsonv2 tool trivy ...
tool() {
	if [ ! -x "$TOOLS/$1" ] || [ "$(cat "$TOOLS/.$1.version" 2>/dev/null)" != "$3" ]; then
		log "building $1 $3${4:+ ($4)}"
		local bin=${2##*/}
		if [ "$bin" = "$1" ]; then
			GOBIN="$TOOLS" go install "$2@$3"
		else
			local tmp
			tmp=$(mktemp -d)
			GOBIN="$tmp" go install "$2@$3" || { rm -rf "$tmp"; return 1; }
			mv -f "$tmp/$bin" "$TOOLS/$1"
			rm -rf "$tmp"
		fi
		echo "$3" >"$TOOLS/.$1.version"
	fi
}
