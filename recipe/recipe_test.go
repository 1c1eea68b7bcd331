package recipe

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/yamlbound"
)

func load(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestValidRecipe(t *testing.T) {
	r, pos, err := Parse("valid.yaml", load(t))
	if err != nil {
		t.Fatalf("Parse = %v, want no error", err)
	}
	if probs := Validate(r, pos); len(probs) != 0 {
		t.Fatalf("Validate = %v, want none", probs)
	}
	if got := pos.Line("spec.sources.upstream.sha256"); got != 13 {
		t.Errorf("line of sha256 = %d, want 13", got)
	}
	if r.Spec.Charts["redis"].Values["replicas"] != float64(2) {
		t.Errorf("values = %v", r.Spec.Charts["redis"].Values)
	}
}

// TestBadRecipes edits the valid recipe one way at a time; each edit must be
// reported with its field, its line and a message saying what is wrong.
func TestBadRecipes(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		line           int    // expected line of the first error
		want           string // substring of the first error
	}{
		{"unknown field", "  build: 3\n", "  build: 3\n  buidl: 4\n", 10, `spec.buidl: unknown field "buidl"; did you mean "build"?`},
		{"wrong kind", "kind: Recipe", "kind: Chart", 2, `kind: expected "Recipe", got "Chart"`},
		{"description with a bidi override", `description: "Redis"`, `description: "Redis \u202egnp.exe"`, 6, `metadata.annotations.kubepkg.dev/description: annotation "kubepkg.dev/description" holds U+202E at byte 6, an invisible formatting character`},
		{"description with an isolate", `description: "Redis"`, `description: "Redis \u2066x"`, 6, "holds U+2066 at byte 6, an invisible formatting character"},
		{"description with a zero-width space", `description: "Redis"`, `description: "Re\u200bdis"`, 6, "holds U+200B at byte 2"},
		{"description with a control character", `description: "Redis"`, `description: "Redis\x07"`, 6, "holds U+0007 at byte 5, a control character"},
		{"description on two lines", `description: "Redis"`, `description: "Redis\nDB"`, 6, "holds U+000A at byte 5"},
		{"description of 2 KB", `description: "Redis"`, `description: "` + strings.Repeat("r", 2000) + `"`, 6, `annotation "kubepkg.dev/description" is 2000 bytes; at most 1024`},
		{"wrong apiVersion", "kubepkg.dev/v1\n", "kubepkg.dev/v2\n", 1, "apiVersion: expected one of"},
		{"non-semver version", "version: v7.2.4", "version: seven", 8, `"seven" is not an exact semver version`},
		{"version as number", "version: v7.2.4", "version: 7.2", 8, "quote it"},
		{"build 0", "build: 3", "build: 0", 9, "build must be 1 or more, got 0"},
		{"build not a number", "build: 3", "build: three", 9, "expected a whole number"},
		{"from names no source", "from: [upstream]", "from: [upstraem]", 19, `no source named "upstraem"`},
		{"path escapes", "path: redis", "path: ../../etc", 14, "leaves the recipe directory"},
		{"dir escapes", "      path: redis\n", "      path: redis\n    local:\n      dir: /etc\n", 16, "leaves the recipe directory"},
		{"bad sha256", "sha256: sha256:3f1c", "sha256: sha256:XYZ", 13, "expected 64 lower-case hex digits"},
		{"two kinds", "      path: redis\n", "      path: redis\n      dir: x\n", 11, "exactly one of url, chart, dir, plugin, git or image; found 2"},
		{"image not pinned", `images: ["docker.io/library/redis:7.2.4@sha256:9a0b000000000000000000000000000000000000000000000000000000000000"]`, `images: ["docker.io/library/redis:7.2.4"]`, 25, "not pinned by digest"},
		{"image not normalised", `images: ["docker.io/library/redis:7.2.4@sha256:9a0b`, `images: ["redis:7.2.4@sha256:9a0b`, 25, "not normalised; write it as docker.io/library/redis:7.2.4@sha256:"},
		{"component path", "path: redis\n            install", "path: nope\n            install", 32, `no chart named "nope"`},
		{"constraint", `version: ">=1.2 <2"`, `version: "~>banana"`, 29, "is not a semver constraint"},
		{"package version set", "    provides: [redis", "    version: 1.0.0\n    provides: [redis", 22, "package.version comes from spec.version"},
		{"bad name", "name: redis\n  annotations", "name: Redis_DB\n  annotations", 4, "not a DNS-1123 label"},
		{"duplicate key", "  build: 3\n", "  build: 3\n  build: 4\n", 10, `duplicate key "build" (first on line 9)`},
		{"exclude empty", "      values: {replicas: 2}\n", "      values: {replicas: 2}\n      exclude: [{}]\n", 21, "an exclude entry needs kind, name or both"},
		{"patch two forms", "      values: {replicas: 2}\n", "      values: {replicas: 2}\n      patches: [{kind: Deployment, merge: {a: 1}, strategic: {a: 1}}]\n", 21, "exactly one of merge, strategic or json6902"},
		{"git short commit", "    img:\n", "    g:\n      git: {url: https://x/y.git, commit: abc123}\n    img:\n", 16, "expected a full 40-hex commit id"},
		{"image sha512", `images: ["docker.io/library/redis:7.2.4@sha256:9a0b000000000000000000000000000000000000000000000000000000000000"]`, `images: ["docker.io/library/redis:7.2.4@sha512:` + strings.Repeat("ab", 64) + `"]`, 25, "is pinned by sha512; the format requires @sha256:"},
		{"image registry host", `images: ["docker.io/library/redis:7.2.4@sha256:9a0b000000000000000000000000000000000000000000000000000000000000"]`, `images: ["exa$mple.io/library/redis:7.2.4@sha256:9a0b000000000000000000000000000000000000000000000000000000000000"]`, 25, `registry "exa$mple.io" is not a host name`},
		{"valuesFiles escapes", "            path: redis\n", "            path: redis\n            valuesFiles: [values.yaml, ../../etc/passwd]\n", 33, `"../../etc/passwd" leaves the recipe directory`},
		{"valuesFiles absolute", "            path: redis\n", "            path: redis\n            valuesFiles: [/etc/passwd]\n", 33, `"/etc/passwd" leaves the recipe directory`},
		{"valuesFiles URL", "            path: redis\n", "            path: redis\n            valuesFiles: [\"https://evil.example/v.yaml\"]\n", 33, "is a URL; valuesFiles name files inside the chart"},
		{"rule without verbs", "    crds: [redises.redis.io]\n", "    crds: [redises.redis.io]\n    permissions:\n      rules:\n        - apiGroups: [\"\"]\n          resources: [pods]\n", 26, "spec.package.permissions.rules[0].verbs: verbs is required (kubepkg's PackageSource schema requires PolicyRule.verbs"},
		{"library without path", "        requires:\n", "        libraries:\n          - name: common\n        requires:\n", 29, "spec.package.variants[0].libraries[0].path: path is required"},
		{"variant without name", "      - name: default\n        requires:\n", "      - requires:\n", 27, "spec.package.variants[0].name: name is required"},
		{"readyWhen without condition", "upgradeCRDs: CreateReplace}", "upgradeCRDs: CreateReplace, readyWhen: [{apiVersion: redis.io/v1, kind: Redis, name: r}]}", 33, "install.readyWhen[0].condition: condition is required"},
		{"healthCheck without current", "upgradeCRDs: CreateReplace}", "upgradeCRDs: CreateReplace, healthCheckExprs: [{apiVersion: redis.io/v1, kind: Redis}]}", 33, "install.healthCheckExprs[0].current: current is required"},
		{"healthCheck without kind", "upgradeCRDs: CreateReplace}", "upgradeCRDs: CreateReplace, healthCheckExprs: [{apiVersion: redis.io/v1, current: \"true\"}]}", 33, "install.healthCheckExprs[0].kind: kind is required"},
		{"api capability without version", `provides: [redis, "api:redis.io/v1"]`, `provides: [redis, "api:redis.io"]`, 22, `capability "api:redis.io" must be api:<group>/<version>`},
		{"capability without value", `provides: [redis, "api:redis.io/v1"]`, `provides: [redis, "storageclass:"]`, 22, `capability "storageclass:" must be <kind>:<value>`},
		{"dependsOn not a package name", "        requires:\n", "        dependsOn: [\"api:x.io/v1\"]\n        requires:\n", 28, `"api:x.io/v1" is not a package name; dependsOn names packages`},
		{"dependsOn itself", "        requires:\n", "        dependsOn: [redis]\n        requires:\n", 28, "a package cannot depend on itself"},
		{"waitStrategy", "upgradeCRDs: CreateReplace}", "upgradeCRDs: CreateReplace, waitStrategy: kstatus}", 33, `expected poller or legacy (kubepkg's schema allows no other), got "kstatus"`},
		{"component libraries", "            path: redis\n", "            path: redis\n            libraries: [common]\n", 33, "allows component libraries only in a package tree"},
		{"path on plain file", "https://example.com/redis-7.2.4.tgz", "https://example.com/redis.yaml", 14, "is not an archive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := string(load(t))
			if !strings.Contains(src, tc.old) {
				t.Fatalf("test edit %q not found in testdata/valid.yaml", tc.old)
			}
			src = strings.Replace(src, tc.old, tc.new, 1)
			var probs Problems
			r, pos, err := Parse("recipe.yaml", []byte(src))
			if pe := (*ProblemsError)(nil); errors.As(err, &pe) {
				probs = pe.Problems
			} else if err != nil {
				t.Fatalf("Parse = %v, want problems", err)
			} else {
				probs = Validate(r, pos).Errors()
			}
			if len(probs) == 0 {
				t.Fatalf("no errors, want one containing %q", tc.want)
			}
			var found *Problem
			for i := range probs {
				if strings.Contains(probs[i].String(), tc.want) {
					found = &probs[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("errors = %v, want one containing %q", probs, tc.want)
			}
			if found.Line != tc.line {
				t.Errorf("line = %d, want %d (%s)", found.Line, tc.line, found)
			}
		})
	}
}

// TestKubepkgShapes checks that what kubepkg documents validates:
// capabilities of any <kind>:<value>, and dependsOn naming packages.
func TestKubepkgShapes(t *testing.T) {
	src := strings.Replace(string(load(t)), `provides: [redis, "api:redis.io/v1"]`, `provides: [redis, "api:redis.io/v1", "storageclass:default", "csi:rbd.csi.ceph.com", "ingress"]`, 1)
	src = strings.Replace(src, "        requires:\n", "        dependsOn: [cert-manager, networking]\n        requires:\n", 1)
	src = strings.Replace(src, "    rollback: {safe: false}\n", "    rollback: {safe: false}\n    permissions: {rules: [{verbs: [get], resources: [pods]}]}\n", 1)
	r, pos, err := Parse("recipe.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if probs := Validate(r, pos); len(probs) != 0 {
		t.Fatalf("Validate = %v, want none", probs)
	}
}

func TestWarnings(t *testing.T) {
	src := strings.Replace(string(load(t)), "    rollback: {safe: false}\n", "", 1)
	src = strings.Replace(src, "    kubepkg.dev/description: \"Redis\"\n", "    kubepkg.dev/home: https://redis.io\n", 1)
	r, pos, err := Parse("recipe.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	probs := Validate(r, pos)
	if len(probs.Errors()) != 0 {
		t.Fatalf("errors = %v, want none", probs.Errors())
	}
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"no description", "rollback is not declared"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings = %q, want one containing %q", all, want)
		}
	}
}

func TestIsArchive(t *testing.T) {
	for in, want := range map[string]bool{
		"https://x/a.tgz": true, "https://x/a.tar.gz?x=1": true, "a.zip": true, "a.tar.xz": true,
		"https://x/a.yaml": false, "a.gz": false,
	} {
		if got := IsArchive(in); got != want {
			t.Errorf("IsArchive(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestNormalizeImage(t *testing.T) {
	const dig = "sha256:a600000000000000000000000000000000000000000000000000000000000000"
	for in, want := range map[string]string{
		"redis:7":                                   "docker.io/library/redis:7",
		"quay.io/a/b:v1@sha256:x":                   "quay.io/a/b:v1@sha256:x",
		"localhost:5000/a/b":                        "localhost:5000/a/b:latest",
		"giantswarm/tiny-tools":                     "docker.io/giantswarm/tiny-tools:latest",
		"index.docker.io/giantswarm/tiny-tools:1.0": "docker.io/giantswarm/tiny-tools:1.0",
		"busybox@" + dig:                            "docker.io/library/busybox@" + dig,
		"busybox:1.36@" + dig:                       "docker.io/library/busybox:1.36@" + dig,
		"not a reference!":                          "not a reference!",
	} {
		if got := NormalizeImage(in); got != want {
			t.Errorf("NormalizeImage(%q) = %q, want %q", in, got, want)
		}
	}
}

// aliasBomb returns a small recipe whose aliases in typed fields (charts ×
// patches × json6902) expand to about 10^levels operations.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: kubepkg.dev/v1\nkind: Recipe\nmetadata: {name: bomb}\nspec:\n  version: v1.0.0\n  build: 1\n")
	b.WriteString("  x0: &o0 [{op: add, path: /a, value: 1}]\n")
	for i := 1; i <= levels; i++ {
		b.WriteString("  x" + strconv.Itoa(i) + ": &o" + strconv.Itoa(i) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*o" + strconv.Itoa(i-1))
		}
		b.WriteString("]\n")
	}
	b.WriteString("  charts:\n")
	for c := 0; c < 10; c++ {
		b.WriteString("    c" + strconv.Itoa(c) + ": {from: [s], patches: [{kind: A, json6902: *o" + strconv.Itoa(levels) + "}]}\n")
	}
	return b.String()
}

// TestAliasBomb: a recipe whose aliases expand beyond its size is refused
// before it is walked, with a message naming the file and the line; a
// recipe using a few aliases still parses.
func TestAliasBomb(t *testing.T) {
	bomb := aliasBomb(8)
	_, _, err := Parse("recipe.yaml", []byte(bomb))
	if err == nil || !errors.Is(err, yamlbound.ErrExpansion) || !strings.Contains(err.Error(), "recipe.yaml: line ") {
		t.Fatalf("Parse(alias bomb of %d bytes) = %v, want an error wrapping yamlbound.ErrExpansion naming recipe.yaml and a line", len(bomb), err)
	}
	few := strings.Replace(string(load(t)), "      values: {replicas: 2}\n", "      values: &v {replicas: 2}\n    other: {from: [upstream], values: *v}\n", 1)
	r, _, err := Parse("recipe.yaml", []byte(few))
	if err != nil {
		t.Fatalf("Parse(recipe with one alias) = %v, want no error", err)
	}
	if got := r.Spec.Charts["other"].Values["replicas"]; got != float64(2) {
		t.Errorf("aliased values = %v, want replicas 2", got)
	}
}

// FuzzParse checks that Parse never panics and never takes more than a
// bounded walk on any input, alias bombs included, and that a recipe it
// accepts validates without panicking.
func FuzzParse(f *testing.F) {
	valid, _ := os.ReadFile("testdata/valid.yaml")
	f.Add(valid)
	f.Add([]byte(aliasBomb(3)))
	f.Add([]byte("a: &a [*a]"))
	f.Add([]byte("spec: {charts: &c {x: {from: [a]}}, sources: *c}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, pos, err := Parse("recipe.yaml", data)
		if err != nil {
			return
		}
		Validate(r, pos)
	})
}

// TestUpperCaseCommit checks that a commit id written in upper case (as
// some web interfaces show it) is accepted and read in lower case.
func TestUpperCaseCommit(t *testing.T) {
	data, err := os.ReadFile("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const commit = "0123456789ABCDEF0123456789abcdef01234567"
	data = []byte(strings.Replace(string(data), "    img:\n", "    tree:\n      git: {url: https://example.com/r.git, commit: "+commit+"}\n    img:\n", 1))
	r, pos, err := Parse("valid.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Spec.Sources["tree"].Git.Commit; got != strings.ToLower(commit) {
		t.Errorf("commit = %s, want %s", got, strings.ToLower(commit))
	}
	for _, p := range Validate(r, pos).Errors() {
		if strings.Contains(p.Field, "tree") {
			t.Errorf("Validate: %v", p)
		}
	}
}

// TestLongNamesAreCut: keys and values far longer than a name are named in
// errors by their first 120 bytes and their length, never repeated whole.
func TestLongNamesAreCut(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"long unknown key", "  build: 3\n", "  build: 3\n  " + strings.Repeat("k", 1000) + ": 1\n", "(1000 bytes)"},
		{"long wrong value", "  build: 3\n", "  build: \"" + strings.Repeat("v", 1<<20) + "\"\n", "(1048576 bytes)"},
	} {
		src := strings.Replace(string(load(t)), tc.old, tc.new, 1)
		_, _, err := Parse("recipe.yaml", []byte(src))
		if err == nil || len(err.Error()) > 2000 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %d bytes of error (%.300v), want a short one containing %q", tc.name, len(fmt.Sprint(err)), err, tc.want)
		}
	}
}

// TestValidateCutsLongNames: a source or chart name, an image, a path or a
// from entry of 1 MB is reported with its field and line in a message of a
// few hundred bytes that gives the value's first bytes and its length.
func TestValidateCutsLongNames(t *testing.T) {
	long := strings.Repeat("N", 1<<20)
	for _, tc := range []struct {
		name, old, new string
		field          string // prefix of the reported field
		line           int
		want           string // substring of the message
	}{
		{"source name", "    img:\n", "    ? " + long + "\n    : {url: ftp://x}\n    img:\n", "spec.sources.NNNN", 16, "is not an http(s) or file URL"},
		{"chart name", "    redis:\n      from", "    ? " + long + "\n    :\n      from", "spec.charts.NNNN", 18, "is not a DNS-1123 label"},
		{"image", `images: ["docker.io/library/redis:7.2.4@sha256:9a0b`, `images: ["` + long + `@sha256:9a0b`, "spec.package.images[0]", 25, "is not a valid digest reference"},
		{"image source", `image: {ref: "docker.io/library/redis`, `image: {ref: "docker.io/library/` + long + `redis`, "spec.sources.img.image.ref", 16, "is not a valid digest reference"},
		{"path", "path: redis\n    img", "path: ../" + long + "\n    img", "spec.sources.upstream.path", 14, "leaves the recipe directory"},
		{"from", "from: [upstream]", "from: [" + long + "]", "spec.charts.redis.from[0]", 19, "no source named"},
		{"component path", "path: redis\n            install", "path: " + long + "\n            install", "spec.package.variants[0].components[0].path", 32, "no chart named"},
		{"url", "url: https://example.com/redis-7.2.4.tgz", "url: ftp://" + long, "spec.sources.upstream.url", 12, "is not an http(s) or file URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := string(load(t))
			if !strings.Contains(src, tc.old) {
				t.Fatalf("test edit %q not found in testdata/valid.yaml", tc.old)
			}
			r, pos, err := Parse("recipe.yaml", []byte(strings.Replace(src, tc.old, tc.new, 1)))
			if err != nil {
				t.Fatalf("Parse = %.300v, want a recipe to validate", err)
			}
			probs := Validate(r, pos).Errors()
			var found *Problem
			for i := range probs {
				if strings.HasPrefix(probs[i].Field, tc.field) && strings.Contains(probs[i].Message, tc.want) {
					found = &probs[i]
				}
				if n := len(probs[i].String()); n > 1000 {
					t.Errorf("a problem of %d bytes: %.300s", n, probs[i])
				}
			}
			if found == nil {
				t.Fatalf("errors = %.2000v, want one on %s containing %q", probs, tc.field, tc.want)
			}
			if !strings.Contains(found.String(), "bytes)") {
				t.Errorf("%.500s: want the value's length said", found)
			}
			if found.Line != tc.line {
				t.Errorf("line = %d, want %d (%.300s)", found.Line, tc.line, found)
			}
			perr := &ProblemsError{File: "recipe.yaml", Problems: probs}
			if n := len(perr.Error()); n > 1000 {
				t.Errorf("ProblemsError is %d bytes long", n)
			}
		})
	}
}

// TestValueKeysBound: a recipe whose values set more keys than
// MaxValueKeys (the hostile one set 190,000, and the merge of them ran
// out of memory) is refused by Validate, naming the field and line.
func TestValueKeysBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: kubepkg.dev/v1\nkind: Recipe\nmetadata: {name: many}\nspec:\n  version: v1.0.0\n  build: 1\n  sources: {s: {dir: chart}}\n  charts:\n    c:\n      from: [s]\n      values:\n")
	for i := 0; i <= MaxValueKeys; i++ {
		fmt.Fprintf(&b, "        k%d: %d\n", i, i)
	}
	r, pos, err := Parse("recipe.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	probs := Validate(r, pos)
	for _, p := range probs {
		if p.Field == "spec.charts.c.values" && p.Line == 11 && strings.Contains(p.Message, "more than 10000 keys") {
			return
		}
	}
	t.Fatalf("Validate(recipe with %d value keys) = %v, want an error on spec.charts.c.values line 11", MaxValueKeys+1, probs)
}
