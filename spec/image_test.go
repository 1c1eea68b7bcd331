package spec

import (
	"strings"
	"testing"
)

func TestParseDigest(t *testing.T) {
	const hex = "42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69"
	for _, tc := range []struct {
		in, err string
	}{
		{in: "sha256:" + hex},
		{in: "sha256:" + strings.ToUpper(hex), err: "non-hex character"},
		{in: "sha256:" + hex[:63], err: "wrong number of hex digits"},
		{in: hex, err: "cannot parse hash"},
		{in: "sha512:" + hex + hex, err: "want sha256"},
		{in: "", err: "cannot parse hash"},
	} {
		h, err := ParseDigest(tc.in)
		if tc.err == "" {
			if err != nil || h.String() != tc.in || h.Hex != hex {
				t.Errorf("ParseDigest(%q) = %v, %v; want it back", tc.in, h, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseDigest(%q) error = %v, want %q", tc.in, err, tc.err)
		}
	}
}

func TestParseImageRef(t *testing.T) {
	const d = "sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69"
	for _, tc := range []struct {
		in   string
		want ImageRef
		err  string
	}{
		{in: "quay.io/kubevirt/virt-api:v1.9.0@" + d, want: ImageRef{"quay.io", "kubevirt/virt-api", "v1.9.0", d}},
		{in: "127.0.0.1:5000/a/b@" + d, want: ImageRef{"127.0.0.1:5000", "a/b", "", d}},
		{in: "localhost:5000/x:1.0_build", want: ImageRef{"localhost:5000", "x", "1.0_build", ""}},
		{in: "busybox", want: ImageRef{"docker.io", "library/busybox", "", ""}},
		{in: "index.docker.io/bitnami/redis:7", want: ImageRef{"docker.io", "bitnami/redis", "7", ""}},
		{in: "quay.io/Kubevirt/virt-api:v1", err: "repository can only contain"},
		{in: "quay.io/x@sha256:abc", err: "invalid checksum digest length"},
		{in: "quay.io/x:", err: "must specify a tag name after the colon"},
		// Registry hosts with characters no host has (issue 15).
		{in: "exa$mple.com/x:1", err: `registry "exa$mple.com" is not a host name`},
		{in: "quay!.io/x@" + d, err: `registry "quay!.io" is not a host name`},
		{in: "-quay.io/x:1", err: `registry "-quay.io" is not a host name`},
		{in: "[::1]:5000/x:1", want: ImageRef{"[::1]:5000", "x", "1", ""}},
	} {
		got, err := ParseImageRef(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.in) {
				t.Errorf("ParseImageRef(%q) error = %v, want one naming the image and saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseImageRef(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}
