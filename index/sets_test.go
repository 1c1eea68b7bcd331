package index_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/internal/stacktest"
)

var setTime = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// TestSetsInIndex: the index lists each whole release set with the set
// digest of its members' spec digests, written as sigs.k8s.io/yaml writes
// it, by the compact and the plain Builder alike; a set missing a member
// is not listed.
func TestSetsInIndex(t *testing.T) {
	var out [][]byte
	for _, compact := range []bool{false, true} {
		var opts []index.BuilderOption
		if compact {
			opts = append(opts, index.Compact())
		}
		b := index.NewBuilder(opts...)
		if err := dist.Add(context.Background(), b, stacktest.Dist()); err != nil {
			t.Fatal(err)
		}
		data, err := b.Marshal(setTime, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		x, err := index.ParseIndex(data)
		if err != nil {
			t.Fatalf("compact %v: %v", compact, err)
		}
		// Build 3 pins candlepin build 9, which is not published.
		if len(x.Sets) != 2 || x.Sets[0].Build != 1 || x.Sets[1].Build != 2 || len(x.Sets[0].Members) != 4 {
			t.Fatalf("compact %v: sets = %+v", compact, x.Sets)
		}
		m := x.Sets[0].Members
		if m[0].Package != "candlepin" || m[1].Package != "foreman" || m[1].Digest != x.Packages["foreman"].Versions[1].Digest {
			t.Fatalf("members = %+v, foreman versions %+v", m, x.Packages["foreman"].Versions)
		}
		if index.ComputeSetDigest(m) != x.Sets[0].Digest {
			t.Fatal("set digest is not the digest of its members")
		}
		want, err := sigsyaml.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, want) {
			t.Fatalf("compact %v: differs from sigs.k8s.io/yaml:\n%s\n---\n%s", compact, data, want)
		}
		if again, err := x.Marshal(); err != nil || !bytes.Equal(again, data) {
			t.Fatalf("compact %v: Marshal of the parsed index differs: %v", compact, err)
		}
		out = append(out, data)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Fatal("the compact Builder writes other sets")
	}
	// An index whose sets do not match its packages does not parse.
	data := string(out[0])
	for _, tc := range []struct{ name, old, new, want string }{
		// An unknown key is read as kubepkg reads unknown keys (ignored, with
		// a warning); the wrong digest beside it is refused.
		{"unknown key and another digest in a set", "sets:\n- build: 1\n  digest: sha256:", "sets:\n- build: 1\n  digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n  x: ", "has digest sha256:0000000000000000000000000000000000000000000000000000000000000000, but its members' digests give"},
		{"another set version", "  package: foreman-stack\n  version: 3.15.0\n- build: 2", "  package: foreman-stack\n  version: 3.16.0\n- build: 2", "foreman-stack 3.16.0 build 1 is not among the packages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(data, tc.old, tc.new, 1)
			if bad == data {
				t.Fatalf("nothing replaced: %q", tc.old)
			}
			if _, err := index.ParseIndex([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseIndex = %v, want %q", err, tc.want)
			}
		})
	}
	// The members' digests are covered: a member's digest changed in the
	// set (and the set digest recomputed) no longer matches the index.
	x, _ := index.ParseIndex(out[0])
	x.Sets[0].Members[2].Digest = "sha256:" + strings.Repeat("0", 64)
	x.Sets[0].Digest = index.ComputeSetDigest(x.Sets[0].Members)
	bad, _ := sigsyaml.Marshal(x)
	if _, err := index.ParseIndex(bad); err == nil || !strings.Contains(err.Error(), "member pulp 3.73.0 build 1 has digest sha256:") {
		t.Fatalf("ParseIndex with a member's digest changed = %v", err)
	}
	x, _ = index.ParseIndex(out[0])
	x.Sets[1].Digest = "sha256:" + strings.Repeat("1", 64)
	bad, _ = sigsyaml.Marshal(x)
	if _, err := index.ParseIndex(bad); err == nil || !strings.Contains(err.Error(), "sets: foreman-stack 3.15.0 build 2 has digest sha256:1111") || !strings.Contains(err.Error(), "but its members' digests give sha256:") {
		t.Fatalf("ParseIndex with a set digest changed = %v", err)
	}
}
