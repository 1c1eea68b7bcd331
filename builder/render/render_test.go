package render

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"sigs.k8s.io/yaml"
)

// packTestdata packs the chart of testdata/corpus/NAME, with Chart.yaml's
// kubeVersion replaced when kubeVersion is set.
func packTestdata(t *testing.T, name, kubeVersion string) []byte {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("../../testdata/corpus", name, "chart"))); err != nil {
		t.Fatal(err)
	}
	if kubeVersion != "" {
		p := filepath.Join(dir, "Chart.yaml")
		data, _ := os.ReadFile(p)
		data = regexp.MustCompile(`(?m)^kubeVersion:.*$`).ReplaceAll(data, []byte("kubeVersion: "+kubeVersion))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return packDir(t, dir, name)
}

// field returns a string at a dotted path of a rendered object.
func field(o map[string]any, path string) string {
	var v any = o
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

func objectsText(t *testing.T, r *Rendered) string {
	t.Helper()
	var b bytes.Buffer
	for _, o := range r.Objects {
		y, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.String()
}

// TestRenderDeterministic renders a chart whose hooks and test pods use
// randAlphaNum, randAlpha, randNumeric, uuidv4, genCA, genSignedCert and
// htpasswd, some in a range loop and in a helper included several times:
// every render gives the same bytes, while Helm alone gives different ones
// (so the test chart is really random), the values keep the shape of the
// functions' output, and each run of a call gives a name of its own, as
// with Helm.
func TestRenderDeterministic(t *testing.T) {
	data := packTestdata(t, "demo-tests", "")
	first, err := Render(data, "apps")
	if err != nil {
		t.Fatalf("Render = %v", err)
	}
	for i := range 3 {
		again, err := Render(packTestdata(t, "demo-tests", ""), "apps")
		if err != nil {
			t.Fatal(err)
		}
		if a, b := objectsText(t, first), objectsText(t, again); a != b {
			t.Fatalf("render %d differs from the first:\n%s\n---- first\n%s", i+2, b, a)
		}
	}

	if first, second := helmRender(t, data), helmRender(t, data); first == second {
		t.Fatal("Helm renders the test chart the same twice; it no longer exercises random names")
	}
	if names := regexp.MustCompile(`name: "demo-tests-(probe|fetch)-[a-zA-Z0-9]{5}"`).FindAllString(helmRender(t, data), -1); len(slices.Compact(slices.Sorted(slices.Values(names)))) != 6 {
		t.Fatalf("Helm names the pods of test-endpoints.yaml %q, want 6 distinct names", names)
	}

	seen := map[string]bool{}
	checks := 0
	for _, o := range first.Objects {
		name := field(o, "metadata.name")
		switch o["kind"] {
		case "Pod":
			if !regexp.MustCompile(`^demo-tests-(test-[123]|probe|fetch)-[a-z0-9]{5}$`).MatchString(name) {
				t.Errorf("test pod name %q, want demo-tests-test-N-xxxxx, demo-tests-probe-xxxxx or demo-tests-fetch-xxxxx", name)
			}
			checks++
		case "Secret":
			if name == "demo-tests-webhook-tls" {
				for k, want := range map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n", "tls.crt": "-----BEGIN CERTIFICATE-----\n", "tls.key": "-----BEGIN RSA PRIVATE KEY-----\n", "htpasswd": "admin:$2a$10$"} {
					data, _ := o["data"].(map[string]any)
					s, _ := data[k].(string)
					if v, _ := base64.StdEncoding.DecodeString(s); !strings.HasPrefix(string(v), want) {
						t.Errorf("%s = %q, want it to start with %q", k, v, want)
					}
				}
				checks++
				break
			}
			if id := field(o, "metadata.annotations.install-id"); !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
				t.Errorf("uuidv4 gave %q, want a version 4 UUID", id)
			}
			pw, _ := base64.StdEncoding.DecodeString(field(o, "data.password"))
			if !regexp.MustCompile(`^[a-zA-Z]{16}$`).Match(pw) {
				t.Errorf("randAlpha 16 gave %q", pw)
			}
			pin, _ := base64.StdEncoding.DecodeString(field(o, "data.pin"))
			if !regexp.MustCompile(`^[0-9]{6}$`).Match(pin) {
				t.Errorf("6 | randNumeric gave %q", pin)
			}
			checks++
		case "Deployment":
			if r := field(o, "spec.template.metadata.annotations.rollme"); len(r) != 8 {
				t.Errorf("randAlphaNum 8 gave %q", r)
			}
			checks++
		}
		if seen[name] {
			t.Errorf("two objects named %s", name)
		}
		seen[name] = true
	}
	if checks != 12 {
		t.Errorf("checked %d objects, want 12 (9 pods, 2 secrets, a deployment)", checks)
	}
	want := []string{"docker.io/giantswarm/tiny-tools:latest", "docker.io/library/busybox@sha256:2919d0172f7524b2d8df9e50066a682669e6d170ac0f6a49676d54358fe970b5", "docker.io/library/nginx:1.27"}
	if strings.Join(first.Images, " ") != strings.Join(want, " ") {
		t.Errorf("Images = %q, want %q", first.Images, want)
	}
}

// TestRandomSeedsPerTemplate renders, in one process, each template of the
// demo chart alone, then all of them again in the reverse order: a
// template renders the same whichever templates were rendered before it,
// so a render does not depend on how renderIsolated splits the work.
func TestRandomSeedsPerTemplate(t *testing.T) {
	ch, err := loader.LoadArchive(bytes.NewReader(packTestdata(t, "demo-tests", "")))
	if err != nil {
		t.Fatal(err)
	}
	if err := deterministicTemplates(ch); err != nil {
		t.Fatal(err)
	}
	render := func(name string) string {
		vals, err := renderValues(ch, "apps", DefaultKubeVersion)
		if err != nil {
			t.Fatal(err)
		}
		out, err := renderTemplate(ch, name, vals)
		if err != nil {
			t.Fatalf("render %s: %v", name, err)
		}
		if len(out) != 1 {
			t.Fatalf("render %s gave %d templates, want 1", name, len(out))
		}
		return out[name]
	}
	names := templateNames(ch, "")
	alone := map[string]string{}
	for _, n := range names {
		alone[n] = render(n)
	}
	for _, n := range slices.Backward(names) {
		if got := render(n); got != alone[n] {
			t.Errorf("%s after the others:\n%s\nalone:\n%s", n, got, alone[n])
		}
	}
	if !strings.Contains(alone["demo-tests/templates/tests/test-endpoints.yaml"], "demo-tests-probe-") {
		t.Errorf("test-endpoints.yaml rendered %q", alone["demo-tests/templates/tests/test-endpoints.yaml"])
	}
}

// helmRender renders a packed chart with Helm's engine alone.
func helmRender(t *testing.T, data []byte) string {
	t.Helper()
	ch, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, ch.Values, chartutil.ReleaseOptions{Name: "demo-tests", Namespace: "y"}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range []string{"demo-tests/templates/tests/test-1.yaml", "demo-tests/templates/tests/test-endpoints.yaml", "demo-tests/templates/secret.yaml"} {
		b.WriteString(out[k])
	}
	return b.String()
}

func TestRenderKubeVersion(t *testing.T) {
	for _, tc := range []struct {
		name, constraint, requested string
		wantVersion, wantPDB        string
		wantClass, wantBetaPDB      bool
		wantErr                     string
	}{
		{name: "default", wantVersion: DefaultKubeVersion, wantPDB: "policy/v1", wantClass: true},
		{name: "requested", requested: "1.24", wantVersion: "v1.24.0", wantPDB: "policy/v1", wantBetaPDB: true},
		{name: "chart caps the version", constraint: `"<1.25.0-0"`, wantVersion: "v1.24.0", wantPDB: "policy/v1", wantBetaPDB: true},
		{name: "chart range", constraint: `">=1.28.0-0 <1.31.0-0"`, wantVersion: "v1.30.0", wantPDB: "policy/v1", wantClass: true},
		{name: "requested outside the chart's range", constraint: `"<1.25.0-0"`, requested: "v1.30.1", wantErr: `chart capabilities requires kubeVersion "<1.25.0-0", which Kubernetes v1.30.1 does not satisfy`},
		{name: "unsatisfiable", constraint: `">=2.0.0"`, wantErr: `chart capabilities requires kubeVersion ">=2.0.0", which no Kubernetes release from v1.16.0 to`},
		{name: "bad version", requested: "latest", wantErr: `kube version "latest"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.requested != "" {
				opts = append(opts, WithKubeVersion(tc.requested))
			}
			r, err := Render(packTestdata(t, "capabilities", tc.constraint), "", opts...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Render = %v, want an error containing %q", err, tc.wantErr)
				}
				// A command line says how to render for another version.
				var kv *KubeVersionError
				if isKube := errors.As(err, &kv); isKube != (tc.constraint != "") || isKube && kv.Requested != tc.requested {
					t.Errorf("Render = %v (a *KubeVersionError: %+v), want one for a chart's constraint, naming the version asked for", err, kv)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.KubeVersion != tc.wantVersion {
				t.Errorf("KubeVersion = %s, want %s", r.KubeVersion, tc.wantVersion)
			}
			apis := " " + strings.Join(r.APIVersions, " ") + " "
			for _, want := range []string{"v1", "v1/Pod", "apps/v1/Deployment", "policy/v1/PodDisruptionBudget", "networking.k8s.io/v1/Ingress"} {
				if !strings.Contains(apis, " "+want+" ") {
					t.Errorf("APIVersions lacks %s", want)
				}
			}
			for _, gone := range []string{"apps/v1beta1", "extensions/v1beta1/Ingress", "v1/PodExecOptions", "v1/PodList"} {
				if strings.Contains(apis, " "+gone+" ") {
					t.Errorf("APIVersions has %s, which Kubernetes %s does not serve", gone, r.KubeVersion)
				}
			}
			if hasBeta := strings.Contains(apis, " policy/v1beta1/PodDisruptionBudget "); hasBeta != tc.wantBetaPDB {
				t.Errorf("APIVersions has policy/v1beta1/PodDisruptionBudget = %v, want %v (removed in 1.25)", hasBeta, tc.wantBetaPDB)
			}
			for _, o := range r.Objects {
				switch o["kind"] {
				case "PodDisruptionBudget":
					if o["apiVersion"] != tc.wantPDB || field(o, "metadata.annotations.rendered-for") != tc.wantVersion {
						t.Errorf("PDB %v for %s, want %s for %s", o["apiVersion"], field(o, "metadata.annotations.rendered-for"), tc.wantPDB, tc.wantVersion)
					}
				case "Ingress":
					if got := field(o, "spec.ingressClassName") != ""; got != tc.wantClass {
						t.Errorf("ingressClassName set = %v, want %v", got, tc.wantClass)
					}
				}
			}
		})
	}
}

// TestDefaultKubeVersion keeps DefaultKubeVersion in step with the
// Kubernetes API modules the API set comes from.
func TestDefaultKubeVersion(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`k8s.io/api v0\.(\d+)\.`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod does not require k8s.io/api")
	}
	if want := "v1." + string(m[1]) + ".0"; DefaultKubeVersion != want {
		t.Errorf("DefaultKubeVersion = %s, want %s to match k8s.io/api in go.mod", DefaultKubeVersion, want)
	}
}

// TestRenderRefusesWhatHelmRefuses renders a chart whose template output
// has an alias into an earlier document: one YAML parser accepts it, Helm
// reads each document alone and fails, and so must Render.
func TestRenderRefusesWhatHelmRefuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "anchors")
	writeChart(t, dir, map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: anchors\nversion: 1.0.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: &l {app: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels: *l\n",
	})
	_, err := Render(packDir(t, dir, "anchors"), "")
	if err == nil || !strings.Contains(err.Error(), "document 2: Helm cannot read it") || !strings.Contains(err.Error(), "unknown anchor") {
		t.Fatalf("Render = %v, want document 2 refused for its unknown anchor", err)
	}
}
