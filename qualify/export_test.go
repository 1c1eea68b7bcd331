package qualify

import (
	"testing"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

// BenchIndex is the index BenchmarkQualify qualifies, for the external
// test package (qualifybench imports qualify): bench 1.0.0 build 1 and
// 1.1.0 build 1, the package of the real shapes (a Deployment, Service,
// ConfigMap, a migration Job hook, a helm test pod, a CRD and its custom
// resource with upgradeCRDs: CreateReplace), charts pushed to reg.
func BenchIndex(tb testing.TB, reg string) *index.RepositoryIndex {
	install := spec.Install{UpgradeCRDs: "CreateReplace"}
	return fixtureIndexB(tb, reg,
		version{pkg: "bench", version: "1.0.0", build: 1, namespace: "bench", install: install, crds: []string{"widgets.example.com"},
			app: &app{name: "bench", version: "1.0.0-1", image: imageV1, crdVersions: []string{"v1"}, storageVersion: "v1", widgetVersion: "v1"}},
		version{pkg: "bench", version: "1.1.0", build: 1, namespace: "bench", install: install, crds: []string{"widgets.example.com"}, rollbackSafe: true,
			app: &app{name: "bench", version: "1.1.0-1", image: imageV2, crdVersions: []string{"v1"}, storageVersion: "v1", widgetVersion: "v1"}},
	)
}
