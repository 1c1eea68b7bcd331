package qualify

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"kbuild.dev/kbuild/internal/testenv"
)

// TestReleaseRecordsHelmReads: the release records kbuild test writes
// (releaseRecords, gzip.BestSpeed by a pooled writer) are Secrets the
// real helm and helm4 CLIs read: list, get manifest of each revision and
// history after an install and an upgrade (the upgrade updates revision
// 1's record to superseded), with Helm's labels.
func TestReleaseRecordsHelmReads(t *testing.T) {
	cp := testCluster(t)
	helms := testenv.Helms(t)
	ctx := context.Background()
	c, err := connect(cp.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	const ns, name = "records", "rec"
	h := &helmClient{kubeconfig: cp.Kubeconfig, cluster: c, timeout: 2 * time.Minute, log: t.Logf}
	r := Release{Package: "recpkg", Name: name, Namespace: ns}
	chartOf := func(version string) *chart.Chart {
		return &chart.Chart{
			Metadata: &chart.Metadata{APIVersion: "v2", Name: "rec", Version: version, AppVersion: "app-" + version},
			Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(
				"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rec-{{ .Chart.Version | replace \".\" \"-\" }}\ndata:\n  version: {{ .Chart.Version | quote }}\n")}},
		}
	}
	if _, err := h.install(ctx, r, chartOf("1.0.0"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.upgrade(ctx, r, chartOf("1.1.0")); err != nil {
		t.Fatal(err)
	}

	// The records as stored: Helm's type and labels (each revision was
	// created pending, then updated: modifiedAt, no createdAt, as Helm's
	// driver leaves them), compressed by kbuild's writer (the gzip
	// header's XFL byte is 4 at BestSpeed, 2 at Helm's BestCompression).
	for v, want := range map[string]map[string]string{
		"1": {"status": "superseded", "modifiedAt": "", "createdAt": "-"},
		"2": {"status": "deployed", "modifiedAt": "", "createdAt": "-"},
	} {
		key := "sh.helm.release.v1." + name + ".v" + v
		s, err := c.cs.CoreV1().Secrets(ns).Get(ctx, key, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Type != "helm.sh/release.v1" {
			t.Errorf("%s: type %q, want helm.sh/release.v1", key, s.Type)
		}
		want["name"], want["owner"], want["version"], want[packageLabel] = name, "helm", v, "recpkg"
		for k, w := range want {
			got, ok := s.Labels[k]
			switch {
			case w == "-" && ok:
				t.Errorf("%s: label %s=%q, want none (as Helm's driver writes it)", key, k, got)
			case w == "" && !ok:
				t.Errorf("%s: no label %s, want a Unix time", key, k)
			case w != "" && w != "-" && got != w:
				t.Errorf("%s: label %s=%q, want %q", key, k, got, w)
			}
		}
		gz, err := base64.StdEncoding.DecodeString(string(s.Data["release"]))
		if err != nil || len(gz) < 10 || gz[0] != 0x1f || gz[1] != 0x8b {
			t.Fatalf("%s: data.release is not base64 of gzip (%v)", key, err)
		}
		if gz[8] != 4 {
			t.Errorf("%s: gzip XFL %d, want 4 (BestSpeed: kbuild's writer, not Helm's)", key, gz[8])
		}
	}

	for _, hc := range helms {
		t.Run(hc.Name, func(t *testing.T) {
			home := t.TempDir()
			helm := func(args ...string) string {
				t.Helper()
				cmd := exec.Command(hc.Path, append(args, "--kubeconfig", cp.Kubeconfig, "-n", ns)...)
				cmd.Env = append(cmd.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s %s: %v\n%s", hc.Name, strings.Join(args, " "), err, out)
				}
				return string(out)
			}
			var list []struct{ Name, Revision, Status, Chart string }
			if err := json.Unmarshal([]byte(helm("list", "-o", "json")), &list); err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].Name != name || list[0].Revision != "2" || list[0].Status != "deployed" || list[0].Chart != "rec-1.1.0" {
				t.Errorf("list: %+v, want rec revision 2 deployed, chart rec-1.1.0", list)
			}
			for rev, want := range map[string]string{"1": "name: rec-1-0-0", "2": "name: rec-1-1-0"} {
				if m := helm("get", "manifest", name, "--revision", rev); !strings.Contains(m, want) || !strings.Contains(m, "kind: ConfigMap") {
					t.Errorf("get manifest --revision %s:\n%s\nwant the ConfigMap %s", rev, m, want)
				}
			}
			var hist []struct {
				Revision   int
				Status     string
				Chart      string
				AppVersion string `json:"app_version"`
			}
			if err := json.Unmarshal([]byte(helm("history", name, "-o", "json")), &hist); err != nil {
				t.Fatal(err)
			}
			if len(hist) != 2 || hist[0].Revision != 1 || hist[0].Status != "superseded" || hist[0].Chart != "rec-1.0.0" ||
				hist[1].Revision != 2 || hist[1].Status != "deployed" || hist[1].AppVersion != "app-1.1.0" {
				t.Errorf("history: %+v, want revision 1 superseded rec-1.0.0, revision 2 deployed app-1.1.0", hist)
			}
		})
	}
}

// BenchmarkEncodeRecord: a release record of about 60 kB of JSON
// (manifest and templates), encoded as Helm's Secrets driver does (a fresh writer
// at BestCompression) and as releaseRecords does.
func BenchmarkEncodeRecord(b *testing.B) {
	var m strings.Builder
	for i := range 60 {
		fmt.Fprintf(&m, "---\n# Source: app/templates/d%d.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-%d\n  labels: {app.kubernetes.io/name: app-%d, helm.sh/chart: app-1.0.0}\nspec:\n  replicas: %d\n  template:\n    spec:\n      containers:\n      - name: c%d\n        image: registry.example/app-%d@sha256:%064x\n        env: [{name: OPTION_%d, value: \"%d\"}]\n", i, i, i, i%3+1, i, i, i*7919, i, i*31)
	}
	rls := &release.Release{Name: "app", Namespace: "ns", Version: 3, Manifest: m.String(),
		Info:  &release.Info{Status: release.StatusDeployed},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "app", Version: "1.0.0"}, Templates: []*chart.File{{Name: "templates/all.yaml", Data: []byte(m.String())}}}}
	j, err := json.Marshal(rls)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("helm", func(b *testing.B) {
		for b.Loop() {
			j, _ := json.Marshal(rls)
			var buf bytes.Buffer
			w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			w.Write(j)
			w.Close()
			_ = base64.StdEncoding.EncodeToString(buf.Bytes())
			b.ReportMetric(float64(buf.Len()), "gzip-B")
		}
		b.ReportMetric(float64(len(j)), "json-B")
	})
	b.Run("kbuild", func(b *testing.B) {
		for b.Loop() {
			out, err := encodeRecord(rls, gzip.BestSpeed)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(base64.StdEncoding.DecodedLen(len(out))), "gzip-B")
		}
		b.ReportMetric(float64(len(j)), "json-B")
	})
}

// TestEncodeFitting: a record over the limit at BestSpeed is written at
// Helm's BestCompression, and either decodes with Helm's own driver.
func TestEncodeFitting(t *testing.T) {
	var m strings.Builder
	for i := range 200 {
		fmt.Fprintf(&m, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  k: \"%x\"\n", i, i*104729)
	}
	rls := &release.Release{Name: "app", Namespace: "ns", Version: 1, Manifest: m.String(), Info: &release.Info{Status: release.StatusDeployed}}
	fast, err := encodeRecord(rls, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	best, err := encodeRecord(rls, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if len(best) >= len(fast) {
		t.Fatalf("BestCompression %d bytes, BestSpeed %d: the case needs the first smaller", len(best), len(fast))
	}
	xfl := func(data []byte) byte {
		gz, err := base64.StdEncoding.DecodeString(string(data))
		if err != nil || len(gz) < 10 {
			t.Fatalf("not base64 of gzip: %v", err)
		}
		return gz[8]
	}
	for _, c := range []struct {
		limit int
		xfl   byte
	}{{len(fast), 4}, {len(fast) - 1, 2}, {len(best), 2}} {
		got, err := encodeFitting(rls, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		if xfl(got) != c.xfl {
			t.Errorf("limit %d (BestSpeed %d, BestCompression %d bytes): gzip XFL %d, want %d", c.limit, len(fast), len(best), xfl(got), c.xfl)
		}
		// Helm's own driver reads it back.
		cs := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"}, Data: map[string][]byte{"release": got}})
		back, err := driver.NewSecrets(cs.CoreV1().Secrets("ns")).Get("r")
		if err != nil || back.Manifest != rls.Manifest || back.Name != "app" {
			t.Errorf("limit %d: Helm's driver read %v, %v", c.limit, back, err)
		}
	}
}
