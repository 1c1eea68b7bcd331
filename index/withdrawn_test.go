package index

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"kbuild.dev/kbuild/spec"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestWithdrawnFormat: an index with tombstones is written as
// sigs.k8s.io/yaml writes it (by Marshal and by a compact Builder alike),
// reads back equal, and withdrawn versions are refused by Add.
func TestWithdrawnFormat(t *testing.T) {
	for _, compact := range []bool{false, true} {
		var opts []BuilderOption
		if compact {
			opts = append(opts, Compact())
		}
		b := NewBuilder(opts...)
		for _, r := range []*spec.PackageSource{record("kubevirt", "1.9.0", 4), record("kubevirt", "1.10.0", 1), record("cdi", "1.66.1", 1)} {
			if err := b.Add("r", r, nil); err != nil {
				t.Fatal(err)
			}
		}
		at := testTime.Add(time.Hour)
		if _, err := b.Withdraw("kubevirt", "1.9.0", 4, "breaks upgrades: see 'issue #7'", at); err != nil {
			t.Fatal(err)
		}
		long := "the operator image of this build crash-loops on clusters with more than one hundred nodes; use 1.66.2 build 1, see \"issue 12\""
		if _, err := b.Withdraw("cdi", "1.66.1", 1, long, at); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Withdraw("cdi", "1.66.1", 1, "again", at); err == nil {
			t.Error("a version was withdrawn twice")
		}
		if _, err := b.Withdraw("cdi", "1.0.0", 1, "never published", at); err == nil {
			t.Error("a version never published was withdrawn")
		}
		if err := b.Add("again.yaml", record("kubevirt", "1.9.0", 4), nil); !errors.As(err, new(*WithdrawnError)) || !strings.Contains(err.Error(), "again.yaml: kubevirt 1.9.0 build 4 was withdrawn on") {
			t.Errorf("adding a withdrawn version: %v", err)
		}
		got, err := b.Marshal(at, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		x, err := ParseIndex(got)
		if err != nil {
			t.Fatalf("compact %v: %v\n%s", compact, err, got)
		}
		if len(x.Withdrawn) != 2 || x.Withdrawn[0].Package != "cdi" || x.Withdrawn[1].Reason != "breaks upgrades: see 'issue #7'" || x.Packages["cdi"] != nil {
			t.Errorf("compact %v: read back %+v, packages %v", compact, x.Withdrawn, x.Packages)
		}
		want, err := sigsyaml.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("compact %v: differs from sigs.k8s.io/yaml\n%s", compact, firstDiff(got, want))
		}
		if again, err := x.Marshal(); err != nil || !bytes.Equal(again, got) {
			t.Errorf("compact %v: Marshal of the parsed index differs: %v\n%s", compact, err, firstDiff(again, got))
		}
	}
}

// TestWithdrawnRefused: an index that withdraws a version it also
// publishes, or with a malformed tombstone, does not parse.
func TestWithdrawnRefused(t *testing.T) {
	x := buildIndex(t, record("kubevirt", "1.9.0", 4))
	ok := Withdrawal{Package: "kubevirt", Version: "1.9.0", Build: 3, Digest: testDigest(3), Reason: "bad", Withdrawn: testTime}
	for _, tc := range []struct {
		name string
		w    []Withdrawal
		want string
	}{
		{"published and withdrawn", []Withdrawal{{Package: "kubevirt", Version: "1.9.0", Build: 4, Digest: testDigest(4), Reason: "bad", Withdrawn: testTime}}, "kubevirt 1.9.0 build 4 is both published and withdrawn"},
		{"no reason", []Withdrawal{{Package: "kubevirt", Version: "1.9.0", Build: 3, Digest: testDigest(3), Withdrawn: testTime}}, "a withdrawal needs a reason"},
		{"bad digest", []Withdrawal{{Package: "kubevirt", Version: "1.9.0", Build: 3, Digest: "md5:x", Reason: "bad", Withdrawn: testTime}}, "withdrawn kubevirt 1.9.0 build 3"},
		{"twice", []Withdrawal{ok, ok}, "out of order or twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *x
			c.Withdrawn = tc.w
			data, err := sigsyaml.Marshal(&c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseIndex(data); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseIndex: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestKeepWithdrawn: a tombstone from another suite's index removes the
// version and is kept; one for other content is refused.
func TestKeepWithdrawn(t *testing.T) {
	b := NewBuilder(Compact())
	rec := record("kubevirt", "1.9.0", 4)
	if err := b.Add("r", rec, nil); err != nil {
		t.Fatal(err)
	}
	d, _ := rec.Spec.Digest()
	tomb := Withdrawal{Package: "kubevirt", Version: "1.9.0", Build: 4, Digest: d, Reason: "bad image", Withdrawn: testTime}
	other := Withdrawal{Package: "cdi", Version: "1.66.1", Build: 1, Digest: testDigest(1), Reason: "bad", Withdrawn: testTime}
	if removed, err := b.KeepWithdrawn(tomb); err != nil || !removed {
		t.Fatalf("KeepWithdrawn = %v, %v", removed, err)
	}
	if removed, err := b.KeepWithdrawn(other); err != nil || removed {
		t.Fatalf("KeepWithdrawn of a version b lacks = %v, %v", removed, err)
	}
	if removed, err := b.KeepWithdrawn(tomb); err != nil || removed {
		t.Fatalf("KeepWithdrawn again = %v, %v", removed, err)
	}
	if err := b.Add("again", record("kubevirt", "1.9.0", 4), nil); !errors.As(err, new(*WithdrawnError)) {
		t.Fatalf("a kept tombstone does not block the version: %v", err)
	}
	data, err := b.Marshal(testTime.Add(time.Hour), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := ParseIndex(data)
	if err != nil || len(x.Withdrawn) != 2 || x.Packages["kubevirt"] != nil {
		t.Fatalf("index = %+v, %v", x, err)
	}
	b2 := NewBuilder()
	b2.Add("r", record("kubevirt", "1.9.0", 4), nil)
	tomb.Digest = testDigest(9)
	if _, err := b2.KeepWithdrawn(tomb); err == nil || !strings.Contains(err.Error(), "was withdrawn with digest "+testDigest(9)+", but this index has it with "+d) {
		t.Fatalf("KeepWithdrawn of other content = %v", err)
	}
	if _, err := b2.KeepWithdrawn(Withdrawal{Package: "x"}); err == nil {
		t.Fatal("a malformed tombstone was kept")
	}
}

func TestFindWithdrawn(t *testing.T) {
	x := &RepositoryIndex{Withdrawn: []Withdrawal{{Package: "cdi", Version: "1.66.1", Build: 1, Reason: "broken"}, {Package: "kubevirt", Version: "1.9.0", Build: 4, Reason: "upgrades"}}}
	for _, tc := range []struct {
		name, version string
		build         int
		want          string
	}{
		{"kubevirt", "1.9.0", 4, "upgrades"},
		{"cdi", "1.66.1", 1, "broken"},
		{"kubevirt", "1.9.0", 3, ""},
		{"kubevirt", "1.9.1", 4, ""},
		{"redis", "1.66.1", 1, ""},
	} {
		w := x.FindWithdrawn(tc.name, tc.version, tc.build)
		if got := ""; w != nil {
			got = w.Reason
			if got != tc.want {
				t.Errorf("FindWithdrawn(%s, %s, %d) = %q, want %q", tc.name, tc.version, tc.build, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("FindWithdrawn(%s, %s, %d) = nil, want %q", tc.name, tc.version, tc.build, tc.want)
		}
	}
}
