package qualify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
)

// helmClient runs Helm's own install, upgrade, rollback, test and
// uninstall actions (helm.sh/helm/v3/pkg/action, what the helm CLI runs),
// with release records in Secrets, as the helm CLI and kubepkg keep them.
type helmClient struct {
	kubeconfig string
	context    string
	cluster    *cluster
	timeout    time.Duration
	log        func(format string, args ...any)
	configs    map[string]*action.Configuration
	kinds      fieldValidationKinds
}

func (h *helmClient) config(namespace string) (*action.Configuration, error) {
	if c, ok := h.configs[namespace]; ok {
		return c, nil
	}
	c := new(action.Configuration)
	if err := c.Init(newRESTGetter(h.cluster, h.kubeconfig, h.context, namespace), namespace, "secret", h.log); err != nil {
		return nil, fmt.Errorf("helm configuration for namespace %s: %w", namespace, err)
	}
	// Helm's Secrets driver, but records compressed by a pooled writer
	// (records.go).
	c.Releases.Driver = newReleaseRecords(h.cluster.cs.CoreV1().Secrets(namespace), h.log)
	if kc, ok := c.KubeClient.(*kube.Client); ok {
		kc.Factory = validatingFactory{Factory: kc.Factory, kinds: &h.kinds}
		// manifests parsed once (buildcache.go)
		c.KubeClient = newBuiltManifests(kc, h.cluster.mapper)
	}
	if h.configs == nil {
		h.configs = map[string]*action.Configuration{}
	}
	h.configs[namespace] = c
	return c, nil
}

// loadChart reads a chart archive whose digest was checked against the pin.
func loadChart(archive []byte) (*chart.Chart, error) {
	return loader.LoadArchive(bytes.NewReader(archive))
}

// install is kubepkg's helm backend's install: the chart's own values
// (vals adds a pre-upgrade hook's kubepkg.fromVersion and toVersion), the
// namespace created if missing, Helm's hooks run and waited for.
func (h *helmClient) install(ctx context.Context, r Release, c *chart.Chart, vals map[string]any) (*release.Release, error) {
	cfg, err := h.config(r.Namespace)
	if err != nil {
		return nil, err
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = r.Name, r.Namespace, true
	in.Timeout = h.timeout // hooks (a migration Job) must finish within it
	in.Labels = map[string]string{packageLabel: r.Package}
	return in.RunWithContext(ctx, c, vals)
}

// packageLabel is the release label kubepkg's operator sets.
const packageLabel = "kubepkg.dev/package"

// upgrade is kubepkg's helm backend's upgrade: no rollback on failure
// (the package, not a release, is rolled back), 20 revisions kept.
func (h *helmClient) upgrade(ctx context.Context, r Release, c *chart.Chart) (*release.Release, error) {
	cfg, err := h.config(r.Namespace)
	if err != nil {
		return nil, err
	}
	up := action.NewUpgrade(cfg)
	up.Namespace = r.Namespace
	up.Timeout = h.timeout
	up.MaxHistory = 20
	up.Labels = map[string]string{packageLabel: r.Package}
	return up.RunWithContext(ctx, r.Name, c, nil)
}

// history returns the release's revisions, oldest first.
func (h *helmClient) history(r Release) ([]*release.Release, error) {
	cfg, err := h.config(r.Namespace)
	if err != nil {
		return nil, err
	}
	hs, err := action.NewHistory(cfg).Run(r.Name)
	if err != nil {
		return nil, err
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i].Version < hs[j].Version })
	return hs, nil
}

// rollback rolls the release back one revision and returns the release
// it now runs.
func (h *helmClient) rollback(r Release) (*release.Release, error) {
	cfg, err := h.config(r.Namespace)
	if err != nil {
		return nil, err
	}
	hs, err := h.history(r)
	if err != nil {
		return nil, err
	}
	if len(hs) < 2 {
		return nil, fmt.Errorf("%s has %d revision(s); nothing to roll back to", r, len(hs))
	}
	rb := action.NewRollback(cfg)
	rb.Version = hs[len(hs)-2].Version
	rb.Timeout = h.timeout
	if err := rb.Run(r.Name); err != nil {
		return nil, err
	}
	// Helm records the rollback as the revision after the newest; read
	// that one, not the whole history again.
	return cfg.Releases.Get(r.Name, hs[len(hs)-1].Version+1)
}

// test runs the release's helm test hooks; the logs of the test pods, when
// the cluster has them (kwok's nodes have none), go to logs.
func (h *helmClient) test(r Release, logs io.Writer) (ran int, err error) {
	cfg, err := h.config(r.Namespace)
	if err != nil {
		return 0, err
	}
	t := action.NewReleaseTesting(cfg)
	t.Namespace = r.Namespace
	t.Timeout = h.timeout
	rel, err := t.Run(r.Name)
	if rel != nil {
		for _, hook := range rel.Hooks {
			for _, e := range hook.Events {
				if e == release.HookTest {
					ran++
				}
			}
		}
	}
	if err != nil {
		return ran, err
	}
	if ran > 0 {
		var b strings.Builder
		if lerr := t.GetPodLogs(&b, rel); lerr != nil {
			fmt.Fprintf(logs, "helm test %s: the test pods' logs are not available: %v\n", r.Name, lerr)
		} else {
			fmt.Fprint(logs, b.String())
		}
	}
	return ran, nil
}

func (h *helmClient) uninstall(r Release) (*release.UninstallReleaseResponse, error) {
	cfg, err := h.config(r.Namespace)
	if err != nil {
		return nil, err
	}
	un := action.NewUninstall(cfg)
	un.Timeout = h.timeout
	return un.Run(r.Name)
}
