package builder

import (
	"strings"
	"testing"

	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/recipe"
)

func TestPinFor(t *testing.T) {
	const (
		a = "sha256:a600000000000000000000000000000000000000000000000000000000000000"
		b = "sha256:b700000000000000000000000000000000000000000000000000000000000000"
	)
	for _, tc := range []struct {
		image  string
		pinned []string
		want   string
	}{
		{"giantswarm/tiny-tools", []string{"docker.io/giantswarm/tiny-tools:latest@" + a}, "docker.io/giantswarm/tiny-tools:latest@" + a},
		{"giantswarm/tiny-tools", []string{"docker.io/giantswarm/tiny-tools@" + a}, "docker.io/giantswarm/tiny-tools@" + a},
		{"giantswarm/tiny-tools:3.12", []string{"docker.io/giantswarm/tiny-tools@" + a}, ""},
		{"busybox@" + a, []string{"docker.io/library/busybox:1.36@" + a}, "docker.io/library/busybox:1.36@" + a},
		{"busybox@" + a, []string{"docker.io/library/busybox:1.36@" + b}, ""},
		{"index.docker.io/library/nginx:1.27", []string{"docker.io/library/nginx:1.27@" + b}, "docker.io/library/nginx:1.27@" + b},
		{"nginx:1.27", []string{"docker.io/library/nginx:1.27"}, ""},
	} {
		got, ok := PinFor(tc.image, tc.pinned)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("PinFor(%s, %q) = %q, %v; want %q", tc.image, tc.pinned, got, ok, tc.want)
		}
	}
}

func TestUnpinnedMessage(t *testing.T) {
	const (
		a = "sha256:a600000000000000000000000000000000000000000000000000000000000000"
		b = "sha256:b700000000000000000000000000000000000000000000000000000000000000"
	)
	images := []string{"quay.io/x/op:v1@" + b, "quay.io/x/other:v1@" + b}
	for _, tc := range []struct{ image, want string }{
		{"quay.io/x/op:v1@" + a, "chart op runs image quay.io/x/op:v1@" + a + ", which package.images does not pin; package.images declares quay.io/x/op:v1@" + b + " (spec.package.images[0], line 7); if the chart's digest is the one to ship, list: quay.io/x/op:v1@" + a},
		{"giantswarm/tiny-tools", "chart op runs image giantswarm/tiny-tools, which package.images does not pin; add docker.io/giantswarm/tiny-tools:latest@sha256:<digest> (kbuild images DIR looks the digest up and prints the block)"},
	} {
		if got := unpinnedMessage("op", tc.image, images, recipe.Positions{"spec.package.images[0]": 7}); got != tc.want {
			t.Errorf("unpinnedMessage(%s) =\n%s\nwant\n%s", tc.image, got, tc.want)
		}
	}
}

// TestCheckRenderedImages: an image the chart runs that package.images
// does not pin is an error; one it pins but the chart runs by tag alone
// is a warning (the cluster resolves the tag when it pulls); one run by
// the pinned digest is neither.
func TestCheckRenderedImages(t *testing.T) {
	const a = "sha256:a600000000000000000000000000000000000000000000000000000000000000"
	r := &recipe.Recipe{}
	r.Spec.Package.Images = []string{"quay.io/x/op:v1@" + a}
	for _, tc := range []struct {
		image string
		sev   recipe.Severity
		want  string
	}{
		{"quay.io/x/op:v1@" + a, recipe.Error, ""},
		{"quay.io/x/op:v1", recipe.Warning, "chart op runs image quay.io/x/op:v1 by tag, which a cluster resolves when it pulls; package.images pins quay.io/x/op:v1@" + a},
		{"quay.io/x/op:v2", recipe.Error, "chart op runs image quay.io/x/op:v2, which package.images does not pin"},
	} {
		probs := CheckRendered(r, recipe.Positions{}, []*PreparedChart{{Key: "op", Rendered: &render.Rendered{Images: []string{tc.image}}}})
		switch {
		case tc.want == "" && len(probs) != 0:
			t.Errorf("%s: %v, want no problem", tc.image, probs)
		case tc.want != "" && (len(probs) != 1 || probs[0].Severity != tc.sev || !strings.HasPrefix(probs[0].Message, tc.want)):
			t.Errorf("%s: %+v, want one of severity %d starting %q", tc.image, probs, tc.sev, tc.want)
		}
	}
}
