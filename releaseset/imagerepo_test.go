package releaseset

import "testing"

func TestImageRepository(t *testing.T) {
	const d = "sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69"
	for _, tc := range []struct{ ref, repo, digest string }{
		{"quay.io/kubevirt/virt-api:v1.9.0@" + d, "quay.io/kubevirt/virt-api", d},
		{"quay.io/kubevirt/virt-api@" + d, "quay.io/kubevirt/virt-api", d},
		// Docker Hub's short and long forms are one repository.
		{"nginx:1.27@" + d, "docker.io/library/nginx", d},
		{"index.docker.io/library/nginx@" + d, "docker.io/library/nginx", d},
		{"127.0.0.1:5000/a/b:1.0", "127.0.0.1:5000/a/b", ""},
		{"not a reference", "not a reference", ""},
	} {
		if repo, digest := ImageRepository(tc.ref); repo != tc.repo || digest != tc.digest {
			t.Errorf("ImageRepository(%q) = %q, %q; want %q, %q", tc.ref, repo, digest, tc.repo, tc.digest)
		}
	}
}
