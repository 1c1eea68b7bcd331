package trust

import (
	"kbuild.dev/kbuild/index"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// insertAfter inserts text after the line holding the first occurrence of
// line that follows the first occurrence of from.
func insertAfter(t *testing.T, s, from, line, text string) string {
	t.Helper()
	i := strings.Index(s, from)
	if i < 0 {
		t.Fatalf("%q not in the index", from)
	}
	j := strings.Index(s[i:], line)
	if j < 0 {
		t.Fatalf("%q not after %q", line, from)
	}
	k := i + j + len(line) - 1
	k += strings.IndexByte(s[k:], '\n') + 1
	return s[:k] + text + s[k:]
}

// TestUnknownFieldsInBigIndex: fields kbuild does not know, with values
// in YAML the fast reader does not handle itself (flow collections, a
// folded scalar), do not make an index of more than 16 MiB unreadable:
// each value is checked on its own (at most 16 MiB each) and skipped, and
// the fields are reported as for a small index. A version whose spec has
// an unknown field is kept when its digest matches the spec without the
// field and left out when it does not, as kubepkg's index.Parse does. A
// value that the slow path refuses (an alias, a duplicate key) is still
// refused.
func TestUnknownFieldsInBigIndex(t *testing.T) {
	x := realisticIndex(60, 90)
	b, err := x.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	s = insertAfter(t, s, "apiVersion:", "\n", "mirror: {url: 'https://mirror.example', weights: [1, 2]}\n")
	s = insertAfter(t, s, "\n  package-0007:\n", "package-0007:", "    labels: {tier: core,\n      team: platform}\n")
	s = insertAfter(t, s, "\n  package-0009:\n", "    - build: ", "      annotations: >\n        folded\n        text\n")
	s = insertAfter(t, s, "\n  package-0011:\n", "      spec:\n", "        retries: {max: 3}\n")
	// package-0013's newest version: a field and a digest over it.
	v13 := x.Packages["package-0013"].Versions[0]
	if strings.Count(s, v13.Digest) != 1 {
		t.Fatalf("the digest of package-0013's version is not unique in the index")
	}
	s = strings.Replace(s, v13.Digest, "sha256:"+strings.Repeat("0", 64), 1)
	s = insertAfter(t, s, "\n  package-0013:\n", "      spec:\n", "        retries: {max: 3}\n")
	data := []byte(s)
	if len(data) <= index.MaxSlowYAML {
		t.Fatalf("the index is %d bytes, want more than %d", len(data), index.MaxSlowYAML)
	}
	got, err := index.ParseIndex(data)
	if err != nil {
		t.Fatalf("ParseIndex of a %d-byte index with unknown fields: %v", len(data), err)
	}
	var fields []string
	for _, u := range got.Unknown {
		fields = append(fields, u.String())
	}
	want := []string{
		"index.yaml: field mirror is not known to kbuild; ignored, as kubepkg ignores it",
		"package package-0007: field labels is not known to kbuild; ignored, as kubepkg ignores it",
	}
	v9 := x.Packages["package-0009"].Versions[0]
	v11 := x.Packages["package-0011"].Versions[0]
	want = append(want,
		"package-0009 "+v9.Version+" build "+strconv.Itoa(v9.Build)+": field annotations is not known to kbuild; ignored, as kubepkg ignores it",
		"package-0011 "+v11.Version+" build "+strconv.Itoa(v11.Build)+": field spec.retries is not known to kbuild, but the digest matches the spec without it; this version is kept without the field, as kubepkg keeps it",
		"package-0013 "+v13.Version+" build "+strconv.Itoa(v13.Build)+": field spec.retries is not known to kbuild (written by a newer kubepkg or kbuild?) and the digest does not match the spec without it; this version is left out, as kubepkg leaves it out")
	if !slices.Equal(fields, want) {
		t.Errorf("unknown fields:\n%s\nwant:\n%s", strings.Join(fields, "\n"), strings.Join(want, "\n"))
	}
	if n, m := len(got.Packages["package-0011"].Versions), len(x.Packages["package-0011"].Versions); n != m {
		t.Errorf("package-0011 has %d versions, want %d (the one with a matching digest kept)", n, m)
	}
	if n, m := len(got.Packages["package-0013"].Versions), len(x.Packages["package-0013"].Versions); n != m-1 {
		t.Errorf("package-0013 has %d versions, want %d (one left out)", n, m-1)
	}
	// Everything else reads as without the fields.
	got.Unknown = nil
	got.Packages["package-0013"] = x.Packages["package-0013"]
	if b2, _ := got.Marshal(); string(b2) != string(b) {
		t.Error("the index read differs from the one written, beyond the unknown fields")
	}

	// Verified as a subscriber does, the fields are warnings.
	k := newTestKeys(t)
	vr, err := Verify(data, sigFile(t, data, k.index), &Trust{IndexKeys: pubs(k.index)}, VerifyOptions{Now: time.Unix(1791633600, 0).Add(time.Hour), DiscardIndex: true})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !slices.Equal(vr.Warnings, want) {
		t.Errorf("Verify warnings:\n%s\nwant:\n%s", strings.Join(vr.Warnings, "\n"), strings.Join(want, "\n"))
	}

	for _, tc := range []struct{ name, value, want string }{
		{"alias", "mirror: {a: &x [1], b: *x}\n", "anchors and aliases are not allowed"},
		{"duplicate key", "mirror: {a: 1, a: 2}\n", `duplicate key "a"`},
		{"not YAML", "mirror: {a: [1}\n", "line 2"},
	} {
		bad := []byte(insertAfter(t, string(b), "apiVersion:", "\n", tc.value))
		if _, err := index.ParseIndex(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s in an unknown field's value: ParseIndex = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
