package qualify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// The images the fixture charts run: pinned by digest (kwok runs no
// container, so nothing is pulled).
const (
	imageV1 = "registry.example/acme/web:1.0@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	imageV2 = "registry.example/acme/web:1.1@sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

// app is a fixture chart of the real shapes: a Deployment, a Service, a
// ConfigMap, a migration Job run as a pre-install and pre-upgrade hook, a
// helm test pod, and optionally CRDs and a custom resource (an operator).
type app struct {
	name, version  string
	image          string
	selector       string // the Deployment's selector value (immutable)
	migrationExit  int    // the migration Job's pod fails with this code
	neverReady     bool   // the Deployment's pods never become Ready
	leaveHook      bool   // a post-install hook object with no delete policy
	crdVersions    []string
	storageVersion string
	widgetVersion  string // the apiVersion version of the Widget it makes
}

func (a app) files() map[string]string {
	f := map[string]string{}
	f["Chart.yaml"] = fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\ntype: application\n", a.name, a.version)
	f["values.yaml"] = "{}\n"
	selector := a.selector
	if selector == "" {
		selector = a.name
	}
	podAnn := ""
	if a.neverReady {
		podAnn = "      annotations:\n        kbuild.dev/test-never-ready: \"true\"\n"
	}
	f["templates/deployment.yaml"] = fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
spec:
  replicas: 2
  selector:
    matchLabels: {app: %[2]s}
  template:
    metadata:
      labels: {app: %[2]s}
%[4]s    spec:
      containers:
      - name: web
        image: %[3]s
`, a.name, selector, a.image, podAnn)
	f["templates/service.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\nspec:\n  selector: {app: %s}\n  ports: [{port: 80}]\n", a.name, selector)
	f["templates/config.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-config\ndata:\n  version: %q\n", a.name, a.version)
	exitAnn := ""
	if a.migrationExit != 0 {
		exitAnn = fmt.Sprintf("      annotations:\n        kbuild.dev/test-exit-code: \"%d\"\n", a.migrationExit)
	}
	f["templates/migrate.yaml"] = fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %[1]s-migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  backoffLimit: 0
  template:
    metadata:
%[3]s    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: %[2]s
`, a.name, a.image, strings.Replace(exitAnn, "      annotations", "      annotations", 1))
	if exitAnn == "" {
		f["templates/migrate.yaml"] = strings.Replace(f["templates/migrate.yaml"], "    metadata:\n    spec:", "    spec:", 1)
	}
	f["templates/tests/smoke.yaml"] = fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[1]s-smoke
  annotations:
    helm.sh/hook: test
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  restartPolicy: Never
  containers:
  - name: smoke
    image: %[2]s
`, a.name, a.image)
	if a.leaveHook {
		f["templates/seed.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s-seed\n  annotations:\n    helm.sh/hook: post-install\ndata: {seeded: \"yes\"}\n", a.name)
	}
	if len(a.crdVersions) > 0 {
		var vs strings.Builder
		for _, v := range a.crdVersions {
			fmt.Fprintf(&vs, `  - name: %s
    served: true
    storage: %t
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, v, v == a.storageVersion)
		}
		f["crds/widgets.yaml"] = fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
%s`, vs.String())
		f["templates/widget.yaml"] = fmt.Sprintf(`apiVersion: example.com/%s
kind: Widget
metadata:
  name: %s-widget
spec: {size: 1}
status:
  phase: Ready
  conditions:
  - type: Ready
    status: "True"
`, a.widgetVersion, a.name)
	}
	return f
}

// push packs the chart and pushes it to the registry as helm push does,
// returning the index's reference to it.
func (a app) push(t testing.TB, registry string) spec.ChartRef {
	t.Helper()
	dir := filepath.Join(t.TempDir(), a.name)
	for rel, body := range a.files() {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	epoch := time.Unix(0, 0)
	arc, err := builder.Pack(dir, a.name, a.version, epoch)
	if err != nil {
		t.Fatal(err)
	}
	img, err := oci.ChartImage(arc.Data, &chart.Metadata{APIVersion: "v2", Name: a.name, Version: a.version, Type: "application"}, epoch)
	if err != nil {
		t.Fatal(err)
	}
	repo := registry + "/qualify-test"
	tag, err := name.NewTag(repo+"/"+a.name+":"+strings.ReplaceAll(a.version, "+", "_"), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
		t.Fatalf("push %s: %v", tag, err)
	}
	return spec.ChartRef{Repository: "oci://" + repo, Name: a.name, Version: a.version, Digest: arc.Digest}
}

// version is one index entry: a package build with one component.
type version struct {
	pkg, version string
	build        int
	app          *app
	namespace    string
	install      spec.Install
	rollbackSafe bool
	requires     []spec.Requirement
	provides     []string
	crds         []string
}

func (v version) entry(t testing.TB, registry string) index.IndexVersion {
	s := spec.PackageSpec{Version: v.version, Build: v.build, Provides: v.provides, CRDs: v.crds}
	if v.rollbackSafe {
		s.Rollback = &spec.Rollback{Safe: true}
	}
	variant := spec.Variant{Name: "default", Requires: v.requires}
	if v.app != nil {
		ref := v.app.push(t, registry)
		in := v.install
		in.Namespace = v.namespace
		variant.Components = []spec.Component{{Name: v.app.name, Chart: &ref, Install: &in}}
		s.Images = []string{v.app.image}
	}
	s.Variants = []spec.Variant{variant}
	d, err := s.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return index.IndexVersion{Version: v.version, Build: v.build, Digest: d, Spec: s}
}

// fixtureIndex returns an index of versions.
func fixtureIndex(t *testing.T, registry string, vs ...version) *index.RepositoryIndex {
	return fixtureIndexB(t, registry, vs...)
}

func fixtureIndexB(t testing.TB, registry string, vs ...version) *index.RepositoryIndex {
	t.Helper()
	x := &index.RepositoryIndex{APIVersion: "kubepkg.dev/v1", Kind: "RepositoryIndex", Packages: map[string]*index.IndexPackage{}}
	for _, v := range vs {
		p := x.Packages[v.pkg]
		if p == nil {
			p = &index.IndexPackage{}
			x.Packages[v.pkg] = p
		}
		p.Versions = append(p.Versions, v.entry(t, registry))
	}
	x.SortVersions()
	return x
}
