package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/internal/testenv"
)

// TestRealRecipes seeds the cache from the real upstream release files in
// testenv.Upstream (verified against the recipes' pins), then validates
// recipes/ offline and builds kubevirt, cdi and virtualization offline into
// the real registry, and checks the charts with helm.
func TestRealRecipes(t *testing.T) {
	fixtures := testenv.Upstream(t, "kubevirt-operator-v1.9.0.yaml", "cdi-operator-v1.66.1.yaml")
	reg := testenv.Registry(t)
	helm := testenv.Tool(t, "helm")
	work := t.TempDir()
	cache := filepath.Join(work, "cache")
	r := kbuild(t, repoRoot, nil, "cache", "add", "--cache-dir", cache,
		filepath.Join(fixtures, "kubevirt-operator-v1.9.0.yaml"), filepath.Join(fixtures, "cdi-operator-v1.66.1.yaml"))
	if r.code != 0 {
		t.Fatalf("cache add: %s", r)
	}
	sums, _ := os.ReadFile(filepath.Join(fixtures, "SHA256SUMS"))
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		f := strings.Fields(line)
		if strings.Contains(f[1], "operator") && !strings.Contains(r.stdout, "sha256:"+f[0]) {
			t.Errorf("cache add did not store %s under its published sha256 %s: %s", f[1], f[0], r.stdout)
		}
	}

	r = kbuild(t, repoRoot, nil, "validate", "--offline", "--cache-dir", cache, "recipes/")
	if r.code != 0 || !strings.Contains(r.stdout, "0 of 8 recipes failed") {
		t.Fatalf("validate --offline recipes/: %s", r)
	}
	// The foreman-stack release set pins builds the recipes make: all four
	// members are validated.
	for _, ok := range []string{"foreman-stack: ok\n", "smart-proxy: ok\n", "pulp: ok\n", "candlepin: ok\n"} {
		if !strings.Contains(r.stdout, "recipes/"+ok) {
			t.Errorf("validate --offline recipes/ does not accept the Foreman stack's recipes/%s: %s", ok, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, `spec.package.images[0]: image "docker.io/nginxinc/nginx-unprivileged:stable-alpine" is not pinned by digest`) {
		t.Errorf("validate --offline does not warn about pulp's unpinned control proxy image: %s", r.stdout)
	}
	if !strings.Contains(r.stdout, "recipes/foreman: ok\n  warning: not checked against the rendered charts") {
		t.Errorf("validate does not say what it could not check for foreman: %s", r.stdout)
	}
	if !strings.Contains(r.stdout, `warning: line 35: spec.package.images[0]: image "quay.io/kubevirt/cdi-apiserver:v1.66.1" is not pinned by digest`) {
		t.Errorf("validate --offline does not warn about cdi's unpinned images: %s", r.stdout)
	}
	// The same unpinned images are errors when online.
	r = kbuild(t, repoRoot, nil, "validate", "--cache-dir", cache, "recipes/cdi")
	if r.code != 1 || !strings.Contains(r.stdout, "error: line 35: spec.package.images[0]") {
		t.Errorf("validate recipes/cdi without --offline: %s", r)
	}

	base := uniqueRepo(t, reg)
	out := filepath.Join(work, "dist")
	r = kbuild(t, repoRoot, nil, "build", "--offline", "--cache-dir", cache, "--registry", base, "--plain-http", "-o", out,
		"recipes/kubevirt", "recipes/cdi", "recipes/virtualization")
	if r.code != 0 {
		t.Fatalf("build --offline: %s", r)
	}
	builds := readRecords(t, out)
	if len(builds) != 3 {
		t.Fatalf("%d records, want 3", len(builds))
	}
	for _, b := range builds {
		if b.Record.Metadata.Name != "kubevirt" {
			continue
		}
		spec := b.Record.Spec
		if spec.Rollback == nil || spec.Rollback.Safe || len(spec.Images) != 9 || spec.CRDs[0] != "kubevirts.kubevirt.io" {
			t.Errorf("kubevirt spec: %+v", spec)
		}
		comps := spec.Variants[0].Components
		if len(comps) != 2 || comps[1].Install.DependsOn[0] != "operator" || comps[1].Install.ReadyWhen[0].Condition != "Available" {
			t.Errorf("kubevirt components: %+v", comps)
		}
		for _, c := range b.Info.Charts {
			out := helmTemplate(t, helm, c.Ref, c.Manifest, "kubevirt", "kubevirt")
			switch c.Name {
			case "kubevirt-operator":
				var deployment string
				for _, doc := range strings.Split(out, "\n---\n") {
					if strings.Contains(doc, "\nkind: Namespace\n") {
						t.Errorf("kubevirt-operator still has the Namespace:\n%s", doc)
					}
					if strings.Contains(doc, "\nkind: Deployment\n") && strings.Contains(doc, "\n  name: virt-operator\n") {
						deployment = doc
					}
				}
				if strings.Contains(deployment, "requiredDuringSchedulingIgnoredDuringExecution") || !strings.Contains(deployment, "preferredDuringSchedulingIgnoredDuringExecution") {
					t.Errorf("virt-operator keeps the required control-plane affinity or lost the preferred one:\n%s", deployment)
				}
				for _, want := range []string{"kind: CustomResourceDefinition", "name: kubevirts.kubevirt.io", "image: quay.io/kubevirt/virt-operator:v1.9.0"} {
					if !strings.Contains(out, want) {
						t.Errorf("kubevirt-operator renders without %q", want)
					}
				}
			case "kubevirt":
				if !strings.Contains(out, "kind: KubeVirt") {
					t.Errorf("kubevirt chart does not create the KubeVirt CR:\n%s", out)
				}
			}
		}
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(t testing.TB, port int) {
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on port %d", port)
}
