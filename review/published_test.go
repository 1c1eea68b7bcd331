package review

import (
	"testing"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
)

func record(name, version string, build int, digest string) *spec.PackageSource {
	return &spec.PackageSource{
		APIVersion: spec.RecordAPIVersion,
		Kind:       spec.RecordKind,
		Metadata:   spec.RecordMetadata{Name: name},
		Spec: spec.PackageSpec{
			Version: version,
			Build:   build,
			Variants: []spec.Variant{{Name: "default", Components: []spec.Component{
				{Name: "a", Chart: &spec.ChartRef{Repository: "oci://r/p/" + name, Name: name, Version: version, Digest: digest}, Install: &spec.Install{Namespace: "ns-a"}},
				{Name: "b", Chart: &spec.ChartRef{Repository: "oci://r/p/" + name, Name: name, Version: version, Digest: digest}},
			}}},
		},
	}
}

func testIndex(t *testing.T, recs ...*spec.PackageSource) []byte {
	t.Helper()
	b := index.NewBuilder()
	for _, r := range recs {
		if err := b.Add("test", r, nil); err != nil {
			t.Fatal(err)
		}
	}
	x, err := b.Index(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	data, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestCounterpartAndCharts(t *testing.T) {
	data := testIndex(t, record("op", "1.0.0", 1, digestA), record("op", "1.1.0", 2, digestB), record("op", "1.1.0", 1, digestA))
	x, err := index.ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, pkg, version string
		build              int
		want               string
	}{
		{"the same release", "op", "1.0.0", 1, "1.0.0 build 1"},
		{"an older build of the newest version", "op", "1.1.0", 1, "1.1.0 build 1"},
		{"a new release gets the newest", "op", "1.2.0", 1, "1.1.0 build 2"},
		{"a new package", "other", "1.0.0", 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := Counterpart(x, tc.pkg, tc.version, tc.build)
			got := ""
			if ok {
				got = Release{v.Version, v.Build}.String()
			}
			if got != tc.want {
				t.Errorf("Counterpart(%s, %s, %d) = %q, want %q", tc.pkg, tc.version, tc.build, got, tc.want)
			}
		})
	}
	v, _ := Counterpart(x, "op", "1.0.0", 1)
	charts := Charts(&v.Spec)
	if len(charts) != 1 || charts[0].Ref.Digest != digestA || charts[0].Namespace != "ns-a" {
		t.Errorf("Charts = %+v, want the one chart with namespace ns-a", charts)
	}
}
