package sources

import (
	"context"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"kbuild.dev/kbuild/internal/testenv"
)

// TestMirrorMountE2E mirrors within the real registry process, through a
// counting proxy, and checks that blobs are mounted across repositories
// rather than uploaded.
func TestMirrorMountE2E(t *testing.T) {
	reg := testenv.Registry(t)
	target, _ := url.Parse("http://" + reg)
	c := &counter{h: httputil.NewSingleHostReverseProxy(target)}
	proxy := httptest.NewServer(c)
	t.Cleanup(proxy.Close)
	host := strings.TrimPrefix(proxy.URL, "http://")

	img, _ := random.Image(4096, 3)
	d := push(t, host+"/kbuild-e2e/src/app:v1", img)
	ref := host + "/kbuild-e2e/src/app:v1@" + d.String()
	dst, err := name.NewRepository(host + "/kbuild-e2e/mirror/" + MirrorPath(ref))
	if err != nil {
		t.Fatal(err)
	}
	c.reset()
	got, err := newFetcher(t).Mirror(context.Background(), ref, dst)
	if err != nil {
		t.Fatal(err)
	}
	if got.DigestStr() != d.String() {
		t.Errorf("Mirror = %s, want digest %s", got, d)
	}
	if _, err := remote.Image(got); err != nil {
		t.Errorf("mirrored image: %v", err)
	}
	mounts := 0
	for _, p := range c.paths {
		if strings.HasPrefix(p, "POST ") && strings.Contains(p, "mount=") {
			mounts++
		}
		if strings.HasPrefix(p, "PATCH ") {
			t.Errorf("a blob was uploaded instead of mounted: %s", p)
		}
	}
	if mounts < 4 { // 3 layers and the config
		t.Errorf("%d blobs mounted, want 4; requests:\n%s", mounts, strings.Join(c.paths, "\n"))
	}
}
