package chartpin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"kbuild.dev/kbuild/internal/plainhttp"
	"kbuild.dev/kbuild/spec"
)

const digestA = "sha256:" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestPullPinned(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	archive := []byte("a chart archive, as far as this test cares")
	sum := sha256.Sum256(archive)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	repo, err := name.NewRepository(host+"/packages/op/op", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteLayer(repo, static.NewLayer(archive, types.MediaType("application/vnd.cncf.helm.chart.content.v1.tar+gzip"))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		ref     spec.ChartRef
		wantErr string
	}{
		{name: "by digest", ref: spec.ChartRef{Repository: "oci://" + host + "/packages/op", Name: "op", Digest: digest}},
		{name: "absent", ref: spec.ChartRef{Repository: "oci://" + host + "/packages/op", Name: "op", Digest: digestA}, wantErr: "chart op: pull " + host + "/packages/op/op@" + digestA},
		{name: "not oci", ref: spec.ChartRef{Repository: "https://example.com/charts", Name: "op", Digest: digest}, wantErr: `is not oci://HOST/PATH`},
		{name: "not sha256", ref: spec.ChartRef{Repository: "oci://" + host + "/p", Name: "op", Digest: "md5:00"}, wantErr: `is not sha256:<hex>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PullPinned(context.Background(), tc.ref, plainhttp.Policy{Loopback: true})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("PullPinned(%+v) = %v, want an error with %q", tc.ref, err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != string(archive) {
				t.Fatalf("PullPinned(%+v) = %q, %v", tc.ref, got, err)
			}
		})
	}
}

// TestPullPinnedMismatch serves other bytes than the digest names: the pull
// must fail and name the pinned digest.
func TestPullPinnedMismatch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		w.Write([]byte("not what was pinned"))
	}))
	defer srv.Close()
	ref := spec.ChartRef{Repository: "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/p", Name: "op", Digest: digestA}
	_, err := PullPinned(context.Background(), ref, plainhttp.Policy{Loopback: true})
	if err == nil || !strings.Contains(err.Error(), digestA) {
		t.Fatalf("PullChart of replaced bytes = %v, want an error naming %s", err, digestA)
	}
}
