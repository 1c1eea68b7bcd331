package site

import (
	"fmt"
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// hostile is a description a recipe could carry; it must render as text.
const hostile = `<script>alert(1)</script>`

// Digests of the fixture's kubevirt-operator 1.9.0-4 chart.
const (
	operatorArchive  = "sha256:3f1c8a0f5e3b2d4c6a7e9f1b3d5c7a9e1f3b5d7c9a1e3f5b7d9c1a3e5f7b9d1c"
	operatorManifest = "sha256:9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
)

// kubevirtImages are real digests of KubeVirt v1.9.0 (read from quay.io for the seed recipes; kubevirt's recipe.yaml pins them).
var kubevirtImages = []string{
	"quay.io/kubevirt/virt-api:v1.9.0@sha256:42341b1d52699f4bb87f3996151bafe2e3fe065e9146cc64a15959ddf7bf2c69",
	"quay.io/kubevirt/virt-controller:v1.9.0@sha256:7c6034ab39b97c0bb2b31bab2aaf576b616a3d6e59777002d63e2f2bf51e73c2",
	"quay.io/kubevirt/virt-handler:v1.9.0@sha256:df9f2069924a28ba76f47e7f4fbd9a0be3aa13cfa004a59e7a708bbff2a90424",
	"quay.io/kubevirt/virt-launcher:v1.9.0@sha256:f23102ca00bf12f7962021adfdfdad63c873b01a03001a6d20d5813950254b9c",
	"quay.io/kubevirt/virt-operator:v1.9.0@sha256:d08b5b5ad1c0d694fad13279e44b44b6fad961aa7508acd53b87ce6ef468cbae",
}

func chartDigest(n int) string {
	return fmt.Sprintf("sha256:%064x", n)
}

func kubevirtSpec(version string, build int, operatorDigest string) spec.PackageSpec {
	tag := fmt.Sprintf("%s-%d", version, build)
	repo := "oci://ghcr.io/example/kubevirt"
	return spec.PackageSpec{
		Version:  version,
		Build:    build,
		Provides: []string{"kubevirt", "api:kubevirt.io/v1"},
		CRDs: []string{
			"kubevirts.kubevirt.io",
			"migrationpolicies.migrations.kubevirt.io",
			"virtualmachineinstances.kubevirt.io",
			"virtualmachines.kubevirt.io",
		},
		Permissions: &spec.Permissions{ClusterWide: true, Rules: []spec.PolicyRule{
			{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"nodes", "pods"}},
			{Verbs: []string{"*"}, APIGroups: []string{"kubevirt.io"}, Resources: []string{"*"}},
		}},
		Rollback: &spec.Rollback{},
		Variants: []spec.Variant{{
			Name:     "default",
			Requires: []spec.Requirement{{Package: "cdi", Version: ">=1.60.0 <2.0.0", Optional: true}},
			Components: []spec.Component{
				{
					Name:    "operator",
					Chart:   &spec.ChartRef{Repository: repo, Name: "kubevirt-operator", Version: tag, Digest: operatorDigest},
					Install: &spec.Install{ReleaseName: "kubevirt-operator", Namespace: "kubevirt", Privileged: true, UpgradeCRDs: "CreateReplace"},
				},
				{
					Name:    "cr",
					Chart:   &spec.ChartRef{Repository: repo, Name: "kubevirt-cr", Version: tag, Digest: chartDigest(build)},
					Install: &spec.Install{Namespace: "kubevirt", DependsOn: []string{"operator"}},
				},
			},
		}},
		Images: kubevirtImages,
	}
}

func version(t testing.TB, s spec.PackageSpec) index.IndexVersion {
	d, err := s.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return index.IndexVersion{Version: s.Version, Build: s.Build, Digest: d, Spec: s}
}

// testIndex is a small repository: KubeVirt in three builds (given out of
// order), CDI, and a package whose strings try to inject markup.
func testIndex(t testing.TB) *index.RepositoryIndex {
	cdi := spec.PackageSpec{
		Version:  "1.66.1",
		Build:    1,
		Provides: []string{"cdi", "api:cdi.kubevirt.io/v1beta1"},
		CRDs:     []string{"cdis.cdi.kubevirt.io", "datavolumes.cdi.kubevirt.io"},
		Rollback: &spec.Rollback{Safe: true},
		Variants: []spec.Variant{{Components: []spec.Component{{
			Name:    "cdi-operator",
			Chart:   &spec.ChartRef{Repository: "oci://ghcr.io/example/cdi", Name: "cdi-operator", Version: "1.66.1-1", Digest: chartDigest(100)},
			Install: &spec.Install{Namespace: "cdi"},
		}}}},
		Images: []string{"quay.io/kubevirt/cdi-operator:v1.66.1@sha256:" + fmt.Sprintf("%064x", 7)},
	}
	evil := spec.PackageSpec{
		Version:  "0.1.0",
		Build:    1,
		Provides: []string{`<b onmouseover="alert(2)">x</b>`},
		Images:   []string{`example.org/x:1"><img src=x onerror=alert(3)>@sha256:` + fmt.Sprintf("%064x", 9)},
		Variants: []spec.Variant{{Components: []spec.Component{{
			Name:  `c"><script>alert(4)</script>`,
			Chart: &spec.ChartRef{Repository: "oci://ghcr.io/example/evil", Name: "evil", Version: "0.1.0-1", Digest: chartDigest(200)},
		}}}},
	}
	return &index.RepositoryIndex{
		APIVersion: index.IndexAPIVersion,
		Kind:       index.IndexKind,
		Generated:  time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC),
		Expires:    time.Date(2026, 12, 28, 12, 0, 0, 0, time.UTC),
		Packages: map[string]*index.IndexPackage{
			"kubevirt": &index.IndexPackage{
				Description: "Virtual machines on Kubernetes",
				Home:        "https://kubevirt.io",
				Versions: []index.IndexVersion{
					version(t, kubevirtSpec("1.8.2", 1, chartDigest(11))),
					version(t, kubevirtSpec("1.9.0", 4, operatorArchive)),
					version(t, kubevirtSpec("1.9.0", 3, chartDigest(13))),
				},
			},
			"cdi": &index.IndexPackage{
				Description: "Containerized Data Importer: persistent storage for KubeVirt",
				Home:        "https://github.com/kubevirt/containerized-data-importer",
				Versions:    []index.IndexVersion{version(t, cdi)},
			},
			"evil": &index.IndexPackage{
				Description: hostile,
				Home:        "javascript:alert(5)",
				Versions:    []index.IndexVersion{version(t, evil)},
			},
		},
	}
}

// testOptions are what a publisher passes for testIndex, and publishedFiles
// the files it says exist beside the catalog.
var publishedFiles = []string{
	"index.yaml.sig",
	"scan.json",
	"sbom/kubevirt-1.9.0-4.cdx.json",
	"provenance/kubevirt-1.9.0-4.intoto.json",
}

func testOptions() []Option {
	return []Option{
		WithTitle("Example Virtualization"),
		WithPublished(publishedFiles...),
		WithManifestDigests(map[string]string{operatorArchive: operatorManifest}),
	}
}
