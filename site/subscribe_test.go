package site

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// TestGitOpsSnippets decodes the Flux snippets strictly into Flux's own
// Go API types (source-controller OCIRepository, helm-controller
// HelmRelease) and the Argo CD ones into a mirror of its Application:
// pinned by the chart's manifest digest, and, in a suite's catalog,
// following the suite's repository with a version range; each
// OCIRepository verified with cosign against the repository's key; object
// names that two packages' "controller" releases cannot share.
func TestGitOpsSnippets(t *testing.T) {
	const manifest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	o := &options{title: "Example charts", manifests: map[string]string{"sha256:aa": manifest}, suites: &Suites{This: "stable", Names: []string{"unstable", "stable"}}}
	chart := &spec.ChartRef{Repository: "oci://ghcr.io/example/kubevirt", Name: "kubevirt-operator", Version: "1.9.0-4", Digest: "sha256:aa"}
	for _, ns := range []string{"kubevirt", ""} {
		cv := newChartView("kubevirt", chart, "kubevirt-operator", ns, o)
		if cv.Follow == nil {
			t.Fatal("a suite's catalog has no follow snippets")
		}
		for _, tt := range []struct {
			what, flux, argo, url, digest, semver string
		}{
			{"pinned", cv.Flux, cv.ArgoCD, "oci://ghcr.io/example/kubevirt/kubevirt-operator", manifest, ""},
			{"following stable", cv.Follow.Flux, cv.Follow.ArgoCD, "oci://ghcr.io/example/kubevirt/suites/stable/kubevirt-operator", "", FollowRange},
		} {
			fd := strings.Split(tt.flux, "\n---\n")
			if len(fd) != 2 {
				t.Fatalf("%s: Flux snippet has %d documents, want 2", tt.what, len(fd))
			}
			var repo sourcev1.OCIRepository
			strict(t, "OCIRepository", fd[0], &repo)
			if repo.APIVersion != sourcev1.GroupVersion.String() || repo.Kind != sourcev1.OCIRepositoryKind || repo.Name != "kubevirt.kubevirt-operator" {
				t.Errorf("%s: OCIRepository %s %s %s", tt.what, repo.APIVersion, repo.Kind, repo.Name)
			}
			if repo.Spec.URL != tt.url || repo.Spec.Reference == nil || repo.Spec.Reference.Digest != tt.digest || repo.Spec.Reference.SemVer != tt.semver {
				t.Errorf("%s: OCIRepository spec = %+v, want %s at digest %q semver %q", tt.what, repo.Spec, tt.url, tt.digest, tt.semver)
			}
			if v := repo.Spec.Verify; v == nil || v.Provider != "cosign" || v.SecretRef == nil || v.SecretRef.Name != "example-charts-cosign" {
				t.Errorf("%s: verify = %+v, want cosign with the secret example-charts-cosign", tt.what, v)
			}
			if !strings.Contains(fd[0], "create secret generic example-charts-cosign --from-file=cosign.pub=index.pub") {
				t.Errorf("%s: the snippet does not say how to make the key's Secret:\n%s", tt.what, fd[0])
			}
			if repo.Spec.LayerSelector == nil || repo.Spec.LayerSelector.MediaType != "application/vnd.cncf.helm.chart.content.v1.tar+gzip" {
				t.Errorf("%s: layerSelector = %+v", tt.what, repo.Spec.LayerSelector)
			}
			var hr helmv2.HelmRelease
			strict(t, "HelmRelease", fd[1], &hr)
			if hr.APIVersion != helmv2.GroupVersion.String() || hr.Kind != helmv2.HelmReleaseKind || hr.Spec.ChartRef == nil || hr.Spec.ReleaseName != "kubevirt-operator" ||
				hr.Spec.ChartRef.Kind != sourcev1.OCIRepositoryKind || hr.Spec.ChartRef.Name != repo.Name || hr.Spec.TargetNamespace != ns {
				t.Errorf("%s: HelmRelease = %+v", tt.what, hr.Spec)
			}
			var app argoApplication
			strict(t, "Application", tt.argo, &app)
			src := app.Spec.Source
			rev := tt.digest + tt.semver
			if app.APIVersion != "argoproj.io/v1alpha1" || app.Kind != "Application" || app.Metadata.Name != repo.Name || src == nil || src.RepoURL != repo.Spec.URL ||
				src.TargetRevision != rev || src.Path != "." || src.Helm == nil || src.Helm.ReleaseName != "kubevirt-operator" {
				t.Errorf("%s: Application = %+v", tt.what, app)
			}
		}
		if want := "helm upgrade --install kubevirt-operator oci://ghcr.io/example/kubevirt/suites/stable/kubevirt-operator --version '>=0.0.0-0'"; !strings.HasPrefix(cv.Follow.Helm, want) {
			t.Errorf("helm follow = %q, want %q...", cv.Follow.Helm, want)
		}
	}
	// Two packages with a "controller" release: their objects differ.
	a := newChartView("alpha", &spec.ChartRef{Repository: "oci://r", Name: "controller", Version: "1.0.0-1", Digest: "sha256:aa"}, "controller", "", o)
	b := newChartView("beta", &spec.ChartRef{Repository: "oci://r", Name: "controller", Version: "1.0.0-1", Digest: "sha256:aa"}, "controller", "", o)
	if name := func(s string) string { return strings.SplitN(strings.SplitN(s, "  name: ", 2)[1], "\n", 2)[0] }; name(a.Flux) == name(b.Flux) || name(a.ArgoCD) == name(b.ArgoCD) {
		t.Errorf("two packages' controller releases share the object name %s", name(a.Flux))
	}
	// Without a manifest digest there is nothing to pin; without suites
	// nothing to follow.
	if cv := newChartView("c", &spec.ChartRef{Repository: "oci://r", Name: "c", Version: "1.0.0-1", Digest: "sha256:bb"}, "c", "", &options{manifests: map[string]string{}}); cv.Flux != "" || cv.ArgoCD != "" || cv.Follow != nil {
		t.Errorf("snippets without a manifest digest or suites: %q %q %+v", cv.Flux, cv.ArgoCD, cv.Follow)
	}
}

// TestRootKeyFiles: the command for root subscribers names key files the
// site publishes, and the catalog links them: each holds its root key.
func TestRootKeyFiles(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, testIndex(t), WithRootKeys(2, testPEM1, testPEM2)); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for i, pem := range []string{testPEM1, testPEM2} {
		name := fmt.Sprintf("root-key-%d.pub", i+1)
		got, err := os.ReadFile(filepath.Join(dir, "keys", name))
		if err != nil || strings.TrimSpace(string(got)) != strings.TrimSpace(pem) {
			t.Errorf("keys/%s = %q, %v; want root key %d", name, got, err, i+1)
		}
		if !strings.Contains(string(page), "--root-key "+name) || !strings.Contains(string(page), `<a href="keys/`+name+`">keys/`+name+`</a>`) {
			t.Errorf("index.html does not name and link keys/%s", name)
		}
	}
}

// TestKeylessSnippets: with WithKeyless the Flux snippets decode into
// source-controller's OCIRepository with verify.matchOIDCIdentity whose
// regular expressions match exactly the identity (no Secret), and the
// chart pinned by digest has the cosign verify line naming the identity,
// issuer and repository; a reusable workflow's shared subject is said.
func TestKeylessSnippets(t *testing.T) {
	const manifest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const issuer = "https://token.actions.githubusercontent.com"
	for _, tc := range []struct{ name, subject string }{
		{"own workflow", "https://github.com/acme/packages/.github/workflows/publish.yml@refs/heads/main"},
		{"reusable workflow", "https://github.com/kbuild-dev/kbuild/.github/workflows/reusable-publish.yml@refs/tags/v0.3.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &options{title: "Example charts", manifests: map[string]string{"sha256:aa": manifest}, suites: &Suites{This: "stable", Names: []string{"unstable", "stable"}}}
			WithKeyless(issuer, tc.subject, "acme/packages")(o)
			cv := newChartView("kubevirt", &spec.ChartRef{Repository: "oci://ghcr.io/example/kubevirt", Name: "kubevirt-operator", Version: "1.9.0-4", Digest: "sha256:aa"}, "kubevirt-operator", "", o)
			for _, flux := range []string{cv.Flux, cv.Follow.Flux} {
				doc := strings.Split(flux, "\n---\n")[0]
				var repo sourcev1.OCIRepository
				strict(t, "OCIRepository", doc, &repo)
				v := repo.Spec.Verify
				if v == nil || v.Provider != "cosign" || v.SecretRef != nil || len(v.MatchOIDCIdentity) != 1 {
					t.Fatalf("verify = %+v, want cosign with one matchOIDCIdentity and no secretRef", v)
				}
				m := v.MatchOIDCIdentity[0]
				iss, sub := regexp.MustCompile(m.Issuer), regexp.MustCompile(m.Subject)
				if !iss.MatchString(issuer) || !sub.MatchString(tc.subject) {
					t.Errorf("matchOIDCIdentity %+v does not match %s, %s", m, issuer, tc.subject)
				}
				for _, other := range []string{tc.subject + "x", "x" + tc.subject, strings.Replace(tc.subject, ".github", "xgithub", 1), strings.Replace(tc.subject, "@refs", "@xrefs", 1)} {
					if sub.MatchString(other) {
						t.Errorf("subject regexp %s matches %s", m.Subject, other)
					}
				}
				if iss.MatchString(issuer+"x") || iss.MatchString("https://token-actions.githubusercontent.com") {
					t.Errorf("issuer regexp %s matches another issuer", m.Issuer)
				}
				if shared := strings.Contains(doc, "a reusable workflow"); shared != (tc.name == "reusable workflow") {
					t.Errorf("the snippet says the subject is shared: %v, want %v:\n%s", shared, !shared, doc)
				}
			}
			want := "cosign verify ghcr.io/example/kubevirt/kubevirt-operator@" + manifest + " \\\n  --certificate-identity " + tc.subject + " \\\n  --certificate-oidc-issuer " + issuer + " \\\n  --certificate-github-workflow-repository acme/packages"
			if cv.Verify != want {
				t.Errorf("Verify = %q, want %q", cv.Verify, want)
			}
		})
	}
	// Without WithKeyless: no cosign line, the key's Secret.
	cv := newChartView("c", &spec.ChartRef{Repository: "oci://r", Name: "c", Version: "1.0.0-1", Digest: "sha256:aa"}, "c", "", &options{manifests: map[string]string{"sha256:aa": manifest}})
	if cv.Verify != "" || !strings.Contains(cv.Flux, "secretRef:") || strings.Contains(cv.Flux, "matchOIDCIdentity") {
		t.Errorf("key-based snippets changed: Verify %q, Flux:\n%s", cv.Verify, cv.Flux)
	}
}
