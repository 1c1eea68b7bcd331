package suite

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"kbuild.dev/kbuild/internal/ocilimit"
)

// TestFollowReferrersBounded: the referrers list Follow reads is input
// from a registry, bounded: a list over ocilimit.MaxManifest is refused
// while it is read, and one listing more than MaxFollowReferrers is
// refused before any referrer is fetched, each with an error naming the
// chart.
func TestFollowReferrersBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func() string
		want string
		is   error
	}{
		{"larger than a manifest may be", func() string {
			return `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json",` + strings.Repeat(" ", ocilimit.MaxManifest) + `"manifests":[]}`
		}, "more than 4 MiB", ocilimit.ErrTooLarge},
		{"too many referrers", func() string {
			var b strings.Builder
			b.WriteString(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[`)
			for i := range MaxFollowReferrers + 1 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"mediaType":"application/vnd.oci.image.manifest.v1+json","size":10,"digest":"sha256:%064x","artifactType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`, i)
			}
			b.WriteString(`]}`)
			return b.String()
		}, fmt.Sprintf("has %d referrers, more than the %d", MaxFollowReferrers+1, MaxFollowReferrers), ErrFollow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registry.New()
			fetched := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.Contains(r.URL.Path, "/referrers/") {
					w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
					fmt.Fprint(w, tc.body())
					return
				}
				if strings.Contains(r.URL.Path, "/manifests/sha256:0000") {
					fetched++
				}
				reg.ServeHTTP(w, r)
			}))
			defer srv.Close()
			repo := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/charts"
			archives := map[string]string{"1.0.0-1": pushChart(t, repo, "app", "1.0.0-1")}
			_, err := Follow(context.Background(), suiteIndex(t, repo, archives, []string{"1.0.0-1"}), "stable", FollowOptions{PlainHTTP: func(string) bool { return true }})
			if err == nil || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "/charts/app@sha256:") {
				t.Fatalf("Follow = %v; want an error wrapping %v saying %q and naming the chart", err, tc.is, tc.want)
			}
			if fetched > 0 {
				t.Errorf("Follow fetched %d referrers of a list it refused", fetched)
			}
		})
	}
}
