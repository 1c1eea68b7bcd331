package recipe

import (
	"strings"
	"testing"
)

const imagesRecipe = `spec:
  package:
    # pinned by hand; the operator deploys most of these
    images:
      - quay.io/x/operator:v1   # TODO: pin
      # the API server
      - "quay.io/x/api:v1@sha256:1111111111111111111111111111111111111111111111111111111111111111"
    variants: []
`

func TestRewriteImages(t *testing.T) {
	const d = "@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	for _, tc := range []struct {
		name    string
		in      string
		lines   []ImageLine
		want    string
		wantErr string
	}{
		{name: "pin one, add one, keep comments", in: imagesRecipe, lines: []ImageLine{
			{Old: "quay.io/x/operator:v1", New: "quay.io/x/operator:v1" + d},
			{Old: "quay.io/x/api:v1@sha256:1111111111111111111111111111111111111111111111111111111111111111", New: "quay.io/x/api:v1@sha256:1111111111111111111111111111111111111111111111111111111111111111"},
			{New: "docker.io/library/busybox:1.36" + d, Comment: "rendered by chart x"},
		}, want: strings.Replace(strings.Replace(imagesRecipe, "quay.io/x/operator:v1   # TODO: pin", "quay.io/x/operator:v1"+d+" # TODO: pin", 1),
			"1111\"\n", "1111\"\n      - docker.io/library/busybox:1.36"+d+"  # rendered by chart x\n", 1)},
		{name: "crlf", in: strings.ReplaceAll(imagesRecipe, "\n", "\r\n"), lines: []ImageLine{{Old: "quay.io/x/operator:v1", New: "quay.io/x/operator:v1" + d}},
			want: strings.ReplaceAll(strings.Replace(imagesRecipe, "quay.io/x/operator:v1   # TODO: pin", "quay.io/x/operator:v1"+d+" # TODO: pin", 1), "\n", "\r\n")},
		{name: "flow list", in: "spec:\n  package:\n    images: [a]\n", lines: []ImageLine{{New: "b"}}, wantErr: "paste the printed block instead"},
		{name: "unknown entry", in: imagesRecipe, lines: []ImageLine{{Old: "nope", New: "b"}}, wantErr: "has no entry nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RewriteImages([]byte(tc.in), tc.lines)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("RewriteImages = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("RewriteImages =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
