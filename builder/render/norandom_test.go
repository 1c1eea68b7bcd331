package render

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// TestRandomCallsRunTwice renders templates whose random calls run more
// than once in one render (a range loop, a helper included twice): each run
// gives a value of its own, of the function's shape, and a second render
// gives the same values. Charts' own lookups still find nothing.
func TestRandomCallsRunTwice(t *testing.T) {
	for _, tc := range []struct {
		name     string
		template string
		helpers  string
		want     string // every field of the output matches it
		distinct bool   // the fields differ from each other
	}{
		{name: "randAlphaNum in a loop", template: `{{ range until 3 }}{{ randAlphaNum 5 }} {{ end }}`, want: `^[a-z0-9]{5}$`, distinct: true},
		{name: "randNumeric in a nested loop", template: `{{ range until 2 }}{{ range until 2 }}{{ 4 | randNumeric }} {{ end }}{{ end }}`, want: `^[0-9]{4}$`, distinct: true},
		{name: "randInt in a loop", template: `{{ range until 3 }}{{ randInt 1000 2000 }} {{ end }}`, want: `^1[0-9]{3}$`, distinct: true},
		{name: "uuidv4 in a helper included twice", template: `{{ include "id" . }} {{ include "id" . }}`, helpers: `{{ define "id" }}{{ uuidv4 }}{{ end }}`, want: `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$`, distinct: true},
		{name: "genCA in a loop", template: `{{ range until 2 }}{{ $ca := genCA "x" 1 }}{{ $ca.Cert | sha256sum }}/{{ $ca.Key | sha256sum }} {{ end }}`, want: `^[0-9a-f]{64}/[0-9a-f]{64}$`, distinct: true},
		{name: "a chart's own lookups", template: `{{ lookup "v1" "Secret" "ns" "x" | toJson }} {{ lookup "v1" "Secret" "" "" | toJson }} {{ lookup "render.kbuild.dev/v1" "RandomSeed" "" "" | toJson }}`, want: `^\{\}$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			render := func() string {
				ch := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "rnd", Version: "1.0.0"}, Templates: []*chart.File{{Name: "templates/t.yaml", Data: []byte(tc.template)}}}
				if tc.helpers != "" {
					ch.Templates = append(ch.Templates, &chart.File{Name: "templates/_helpers.tpl", Data: []byte(tc.helpers)})
				}
				return renderRnd(t, ch, true)
			}
			out := render()
			fields := strings.Fields(out)
			if len(fields) < 2 {
				t.Fatalf("rendered %q, want at least two values", out)
			}
			for _, f := range fields {
				if !regexp.MustCompile(tc.want).MatchString(f) {
					t.Errorf("value %q does not match %s", f, tc.want)
				}
			}
			if n := len(slices.Compact(slices.Sorted(slices.Values(fields)))); tc.distinct && n != len(fields) {
				t.Errorf("rendered %q: %d distinct values of %d", out, n, len(fields))
			}
			if again := render(); again != out {
				t.Errorf("second render %q, first %q", again, out)
			}
		})
	}
}

// TestRandomInTplValues: template text in values that a chart renders with
// tpl gives the same values on every render, of the function's shape;
// without the rewrite the same chart renders differently each time.
func TestRandomInTplValues(t *testing.T) {
	render := func(rewrite bool) string {
		ch := &chart.Chart{
			Metadata:  &chart.Metadata{APIVersion: "v2", Name: "rnd", Version: "1.0.0"},
			Templates: []*chart.File{{Name: "templates/t.yaml", Data: []byte(`{{ tpl .Values.auth.password . }} {{ tpl (index .Values.ids 0) . }} {{ .Values.plain }}`)}},
			Values: map[string]any{
				"auth":  map[string]any{"password": "{{ randAlphaNum 12 }}"},
				"ids":   []any{"{{ uuidv4 }}"},
				"plain": "no template here",
			},
		}
		return renderRnd(t, ch, rewrite)
	}
	if a, b := render(false), render(false); a == b {
		t.Fatalf("without the rewrite two renders are equal (%q): the test cannot tell", a)
	}
	a, b := render(true), render(true)
	if a != b {
		t.Fatalf("two renders differ:\n%s\n%s", a, b)
	}
	if !regexp.MustCompile(`^[a-z0-9]{12} [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12} no template here$`).MatchString(a) {
		t.Errorf("rendered %q, want a 12-character password, a version 4 UUID and the plain value", a)
	}
}

// renderRnd renders templates/t.yaml of ch, a chart named rnd, as the
// render check does, its random calls rewritten when rewrite is set.
func renderRnd(t *testing.T, ch *chart.Chart, rewrite bool) string {
	t.Helper()
	if rewrite {
		if err := deterministicTemplates(ch); err != nil {
			t.Fatal(err)
		}
	}
	vals, err := renderValues(ch, "", DefaultKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	out, err := renderTemplate(ch, "rnd/templates/t.yaml", vals)
	if err != nil {
		t.Fatal(err)
	}
	return out["rnd/templates/t.yaml"]
}

// renderTemplate renders the template name of ch alone (see only), with
// random seeds of its own (see randomSeeds).
func renderTemplate(ch *chart.Chart, name string, vals chartutil.Values) (map[string]string, error) {
	return newTemplateSet(ch).render(name, vals)
}
