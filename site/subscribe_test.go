package site

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/spec"
)

// kubepkg's api/v1 Repository and Package, mirrored field by field from
// its repository_types.go and package_types.go (kubepkg publishes no Go
// module of its API that can be fetched). Only the decoding matters: the
// snippets must decode strictly into them.
type kpObjectMeta struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

type kpRepository struct {
	APIVersion string       `json:"apiVersion,omitempty"`
	Kind       string       `json:"kind,omitempty"`
	Metadata   kpObjectMeta `json:"metadata,omitempty"`
	Spec       struct {
		URL        string   `json:"url"`
		Priority   int32    `json:"priority,omitempty"`
		Interval   string   `json:"interval,omitempty"`
		PublicKeys []string `json:"publicKeys,omitempty"`
		Trust      *struct {
			RootKeys      []string `json:"rootKeys"`
			RootThreshold int32    `json:"rootThreshold,omitempty"`
		} `json:"trust,omitempty"`
		AllowUnsigned bool `json:"allowUnsigned,omitempty"`
	} `json:"spec,omitempty"`
}

type kpPackage struct {
	APIVersion string       `json:"apiVersion,omitempty"`
	Kind       string       `json:"kind,omitempty"`
	Metadata   kpObjectMeta `json:"metadata,omitempty"`
	Spec       struct {
		Variant            string         `json:"variant,omitempty"`
		Version            string         `json:"version,omitempty"`
		Repository         string         `json:"repository,omitempty"`
		IgnoreDependencies []string       `json:"ignoreDependencies,omitempty"`
		Components         map[string]any `json:"components,omitempty"`
		CRDPolicy          string         `json:"crdPolicy,omitempty"`
	} `json:"spec,omitempty"`
}

// argoApplication mirrors the fields of Argo CD's argoproj.io/v1alpha1
// Application (pkg/apis/application/v1alpha1/types.go) that the snippet
// uses and their neighbours; Argo CD's Go module cannot be built here.
type argoApplication struct {
	APIVersion string       `json:"apiVersion,omitempty"`
	Kind       string       `json:"kind,omitempty"`
	Metadata   kpObjectMeta `json:"metadata"`
	Spec       struct {
		Source *struct {
			RepoURL        string `json:"repoURL"`
			Path           string `json:"path,omitempty"`
			TargetRevision string `json:"targetRevision,omitempty"`
			Chart          string `json:"chart,omitempty"`
			Helm           *struct {
				ReleaseName  string         `json:"releaseName,omitempty"`
				ValuesObject map[string]any `json:"valuesObject,omitempty"`
			} `json:"helm,omitempty"`
		} `json:"source,omitempty"`
		Destination struct {
			Server    string `json:"server,omitempty"`
			Namespace string `json:"namespace,omitempty"`
			Name      string `json:"name,omitempty"`
		} `json:"destination"`
		Project    string `json:"project"`
		SyncPolicy *struct {
			SyncOptions []string `json:"syncOptions,omitempty"`
		} `json:"syncPolicy,omitempty"`
	} `json:"spec"`
}

const (
	testPEM1 = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"
	testPEM2 = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA3FIl8ZrNWGnMJmVcvkrJEBvMpeNsdUiw8Q0s9SXL6Ks=\n-----END PUBLIC KEY-----\n"
)

func strict(t *testing.T, what, doc string, v any) {
	t.Helper()
	if err := sigsyaml.UnmarshalStrict([]byte(doc), v); err != nil {
		t.Fatalf("%s does not decode strictly into its API type: %v\n%s", what, err, doc)
	}
}

// docs splits a snippet into its YAML documents, each keeping its last
// line break.
func docs(s snippet) []string {
	parts := strings.SplitAfter(s.Before+s.SiteURL+s.After, "\n---\n")
	for i := range parts {
		parts[i] = strings.TrimSuffix(parts[i], "---\n")
	}
	return parts
}

// TestRepositorySnippets decodes the catalog's kubepkg snippets strictly
// into kubepkg's cluster API types: the Repository with its public keys
// or root keys inlined, and a Package from it.
func TestRepositorySnippets(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      []Option
		keys      []string
		rootKeys  []string
		threshold int32
		cmd       string
	}{
		{name: "public keys", opts: []Option{WithPublicKeys(testPEM1, testPEM2)}, keys: []string{testPEM1, testPEM2}, cmd: "--public-key index.pub"},
		{name: "root keys", opts: []Option{WithRootKeys(2, testPEM1, testPEM2)}, rootKeys: []string{testPEM1, testPEM2}, threshold: 2, cmd: "--root-key root-key-1.pub --root-key root-key-2.pub --root-threshold 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &options{title: "Example Packages", baseURL: "https://example.org/pkgs", published: map[string]bool{}, manifests: map[string]string{}}
			for _, opt := range tc.opts {
				opt(o)
			}
			s := packageSnippet(o, "kubevirt", "1.10.0")
			d := docs(s)
			if len(d) != 2 {
				t.Fatalf("%d documents, want 2", len(d))
			}
			var r kpRepository
			strict(t, "Repository", d[0], &r)
			if r.APIVersion != "kubepkg.dev/v1" || r.Kind != "Repository" || r.Metadata.Name != "example-packages" || r.Spec.URL != "https://example.org/pkgs/index.yaml" {
				t.Errorf("Repository = %+v", r)
			}
			if strings.Join(r.Spec.PublicKeys, "|") != strings.Join(tc.keys, "|") {
				t.Errorf("publicKeys = %q, want %q", r.Spec.PublicKeys, tc.keys)
			}
			if tc.rootKeys != nil && (r.Spec.Trust == nil || strings.Join(r.Spec.Trust.RootKeys, "|") != strings.Join(tc.rootKeys, "|") || r.Spec.Trust.RootThreshold != tc.threshold) {
				t.Errorf("trust = %+v, want root keys %q threshold %d", r.Spec.Trust, tc.rootKeys, tc.threshold)
			}
			var p kpPackage
			strict(t, "Package", d[1], &p)
			if p.APIVersion != "kubepkg.dev/v1" || p.Kind != "Package" || p.Metadata.Name != "kubevirt" || p.Spec.Version != "1.10.0" || p.Spec.Repository != "example-packages" {
				t.Errorf("Package = %+v", p)
			}
			if cmd := s.CmdBefore + s.SiteURL + s.CmdAfter; !strings.Contains(cmd, "kubepkg repo add example-packages https://example.org/pkgs/index.yaml "+tc.cmd) {
				t.Errorf("command = %q", cmd)
			}
		})
	}
}

// TestGitOpsSnippets decodes the Flux snippet strictly into Flux's own Go
// API types (source-controller OCIRepository, helm-controller HelmRelease)
// and the Argo CD one into a mirror of its Application, and checks that
// each pins the chart by its manifest digest.
func TestGitOpsSnippets(t *testing.T) {
	const manifest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	o := &options{manifests: map[string]string{"sha256:aa": manifest}}
	for _, ns := range []string{"kubevirt", ""} {
		cv := newChartView(&spec.ChartRef{Repository: "oci://ghcr.io/example/kubevirt", Name: "kubevirt-operator", Version: "1.9.0-4", Digest: "sha256:aa"}, "kubevirt-operator", ns, o)
		fd := strings.Split(cv.Flux, "\n---\n")
		if len(fd) != 2 {
			t.Fatalf("Flux snippet has %d documents, want 2", len(fd))
		}
		var repo sourcev1.OCIRepository
		strict(t, "OCIRepository", fd[0], &repo)
		if repo.APIVersion != sourcev1.GroupVersion.String() || repo.Kind != sourcev1.OCIRepositoryKind {
			t.Errorf("OCIRepository type %s %s", repo.APIVersion, repo.Kind)
		}
		if repo.Spec.URL != "oci://ghcr.io/example/kubevirt/kubevirt-operator" || repo.Spec.Reference == nil || repo.Spec.Reference.Digest != manifest {
			t.Errorf("OCIRepository spec = %+v, want the chart pinned by %s", repo.Spec, manifest)
		}
		if repo.Spec.LayerSelector == nil || repo.Spec.LayerSelector.MediaType != "application/vnd.cncf.helm.chart.content.v1.tar+gzip" {
			t.Errorf("layerSelector = %+v", repo.Spec.LayerSelector)
		}
		var hr helmv2.HelmRelease
		strict(t, "HelmRelease", fd[1], &hr)
		if hr.APIVersion != helmv2.GroupVersion.String() || hr.Kind != helmv2.HelmReleaseKind || hr.Spec.ChartRef == nil ||
			hr.Spec.ChartRef.Kind != sourcev1.OCIRepositoryKind || hr.Spec.ChartRef.Name != repo.Name || hr.Spec.TargetNamespace != ns {
			t.Errorf("HelmRelease = %+v", hr.Spec)
		}
		var app argoApplication
		strict(t, "Application", cv.ArgoCD, &app)
		src := app.Spec.Source
		if app.APIVersion != "argoproj.io/v1alpha1" || app.Kind != "Application" || src == nil || src.RepoURL != repo.Spec.URL ||
			src.TargetRevision != manifest || src.Path != "." || src.Helm == nil || src.Helm.ReleaseName != "kubevirt-operator" {
			t.Errorf("Application = %+v", app)
		}
	}
	// Without a manifest digest there is nothing to pin: no snippets.
	if cv := newChartView(&spec.ChartRef{Repository: "oci://r", Name: "c", Version: "1.0.0-1", Digest: "sha256:bb"}, "c", "", o); cv.Flux != "" || cv.ArgoCD != "" {
		t.Errorf("snippets without a manifest digest: %q %q", cv.Flux, cv.ArgoCD)
	}
}
