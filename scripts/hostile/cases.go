package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pin is a well-formed digest that nothing has.
var pin = "sha256:" + strings.Repeat("0", 63) + "1"

// recipe returns a recipe.yaml with the given sources and charts blocks
// (YAML flow mappings) and extra lines under spec.package.
func recipe(sources, charts, pkg string) string {
	return fmt.Sprintf(`apiVersion: kubepkg.dev/v1
kind: Recipe
metadata:
  name: hostile
  annotations: {kubepkg.dev/description: "a hostile case"}
spec:
  version: v1.0.0
  build: 1
  sources: %s
  charts: %s
  package:
    rollback: {safe: true}
%s`, sources, charts, pkg)
}

func write(dir, name, content string) {
	p := filepath.Join(dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		panic(err)
	}
}

// kbuildOutside runs kbuild without limits to prepare a case (keys).
func (c *corpus) kbuildOutside(dir string, args ...string) {
	cmd := exec.Command(c.kbuild, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		panic(fmt.Sprintf("kbuild %s: %v\n%s", strings.Join(args, " "), err, out))
	}
}

// chartIndex returns a helm repo index of n charts (two versions each)
// named by name(i).
func chartIndex(n int, name func(int) string) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nentries:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %s:\n", name(i))
		for v := 1; v <= 2; v++ {
			fmt.Fprintf(&b, "  - apiVersion: v2\n    name: %s\n    version: 1.0.%d\n    digest: %064d\n    urls:\n    - c-%d-1.0.%d.tgz\n", name(i), v, i, i, v)
		}
	}
	return b.Bytes()
}

// laughs returns YAML flow text of levels nested lists of ten aliases.
func laughs(anchorPrefix string, levels int) (defs, top string) {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s0: &%s0 [x]\n", anchorPrefix, anchorPrefix)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  %s%d: &%s%d [", anchorPrefix, i, anchorPrefix, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "*%s%d", anchorPrefix, i-1)
		}
		b.WriteString("]\n")
	}
	return b.String(), "*" + anchorPrefix + strconv.Itoa(levels)
}

// chartDir writes a chart with one template next to the recipe.
func chartDir(dir, template string) {
	write(dir, "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\n")
	write(dir, "chart/templates/bomb.yaml", template)
	write(dir, "recipe.yaml", recipe("{local: {dir: chart}}", "{c: {from: [local]}}", variant))
}

// watched writes a meta recipe and a watch rule with the upstream given
// (a YAML flow mapping) beside it.
func watched(dir, upstream string) {
	write(dir, "recipe.yaml", recipe("{}", "{}", "    variants: [{name: default}]\n"))
	write(dir, "watch.yaml", "apiVersion: kbuild.dev/v1alpha1\nkind: Watch\nupstream:\n  "+upstream+"\n")
}

// variant installs chart c.
const variant = "    images: []\n    variants: [{name: default, components: [{name: c, path: c}]}]\n"

var cases = []hostileCase{
	{name: "recipe alias bomb", want: "aliases expand", setup: func(c *corpus, dir string) []string {
		var b strings.Builder
		b.WriteString("apiVersion: kubepkg.dev/v1\nkind: Recipe\nmetadata: {name: bomb}\nspec:\n  version: v1.0.0\n  build: 1\n")
		b.WriteString("  x0: &o0 [{op: add, path: /a, value: 1}]\n")
		for i := 1; i <= 9; i++ {
			fmt.Fprintf(&b, "  x%d: &o%d [*o%d,*o%d,*o%d,*o%d,*o%d,*o%d,*o%d,*o%d,*o%d,*o%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
		}
		b.WriteString("  charts:\n")
		for i := 0; i < 200; i++ {
			fmt.Fprintf(&b, "    c%d: {from: [s], patches: [{kind: A, json6902: *o9}, {kind: B, json6902: *o9}]}\n", i)
		}
		write(dir, "recipe.yaml", b.String())
		return []string{"validate", "."}
	}},
	{name: "recipe symlink to /dev/zero", want: "not a regular file", setup: func(c *corpus, dir string) []string {
		os.Symlink("/dev/zero", filepath.Join(dir, "recipe.yaml"))
		return []string{"validate", "."}
	}},
	{name: "recipe fifo", want: "not a regular file", setup: func(c *corpus, dir string) []string {
		syscall.Mkfifo(filepath.Join(dir, "recipe.yaml"), 0o644)
		return []string{"validate", "."}
	}},
	{name: "recipe of 5 MB", want: "limit for a recipe", setup: func(c *corpus, dir string) []string {
		write(dir, "recipe.yaml", strings.Repeat("# padding\n", 500_000))
		return []string{"validate", "."}
	}},
	{name: "valuesFiles leaving the chart", want: "leaves the recipe directory", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		write(dir, "recipe.yaml", recipe("{local: {dir: chart}}", "{c: {from: [local]}}",
			"    variants: [{name: default, components: [{name: c, path: c, valuesFiles: [../../../etc/passwd]}]}]\n"))
		return []string{"validate", "."}
	}},
	{name: "image pinned by sha512", want: "is pinned by sha512", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		write(dir, "recipe.yaml", recipe("{local: {dir: chart}}", "{c: {from: [local]}}",
			"    images: [\"docker.io/library/redis:7@sha512:"+strings.Repeat("ab", 64)+"\"]\n"))
		return []string{"validate", "."}
	}},
	{name: "chart index of 200k names", want: "404 Not Found", setup: func(c *corpus, dir string) []string {
		c.files["idx200k/index.yaml"] = chartIndex(200_000, func(i int) string { return fmt.Sprintf("chart-%07d", i) })
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {chart: {repository: %q, name: chart-0199999, version: 1.0.2, digest: %q}}}", c.base+"/files/idx200k", pin), "{c: {from: [up]}}", ""))
		return []string{"fetch", "--cache-dir", "cache", "."}
	}},
	{name: "chart index with 1 MB names", want: "has no chart", setup: func(c *corpus, dir string) []string {
		c.files["longnames/index.yaml"] = chartIndex(20, func(i int) string { return strconv.Itoa(i) + strings.Repeat("n", 1<<20-100) })
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {chart: {repository: %q, name: wanted, version: 1.0.0, digest: %q}}}", c.base+"/files/longnames", pin), "{c: {from: [up]}}", ""))
		return []string{"fetch", "--cache-dir", "cache", "."}
	}},
	{name: "chart index alias bomb", want: "aliases expand", setup: func(c *corpus, dir string) []string {
		defs, top := laughs("l", 9)
		c.files["laughs/index.yaml"] = []byte("apiVersion: v1\nbombs:\n" + defs + "entries:\n  wanted:\n  - name: wanted\n    version: 1.0.0\n    urls: " + top + "\n")
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {chart: {repository: %q, name: wanted, version: 1.0.0, digest: %q}}}", c.base+"/files/laughs", pin), "{c: {from: [up]}}", ""))
		return []string{"fetch", "--cache-dir", "cache", "."}
	}},
	{name: "url source that stalls", want: "no data for 3s", setup: func(c *corpus, dir string) []string {
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {url: %q, sha256: %q}}", c.base+"/stall/x.yaml", pin), "{c: {from: [up]}}", ""))
		return []string{"fetch", "--cache-dir", "cache", "--timeout", "3s", "."}
	}},
	{name: "image manifest that stalls", want: "no data for 3s", setup: func(c *corpus, dir string) []string {
		host := strings.TrimPrefix(c.base, "http://")
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{local: {dir: chart}, img: {image: {ref: %q}}}", host+"/app/x:1@"+pin), "{c: {from: [local]}}", ""))
		return []string{"fetch", "--cache-dir", "cache", "--plain-http", "--timeout", "3s", "."}
	}},
	{name: "oci chart manifest that stalls", want: "no data for 3s", setup: func(c *corpus, dir string) []string {
		host := strings.TrimPrefix(c.base, "http://")
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {chart: {repository: %q, name: app, version: 1.0.0, digest: %q}}}", "oci://"+host+"/charts", pin), "{c: {from: [up]}}", ""))
		return []string{"fetch", "--cache-dir", "cache", "--plain-http", "--timeout", "3s", "."}
	}},
	{name: "site index with an endless body", want: "more than the", setup: func(c *corpus, dir string) []string {
		c.kbuildOutside(dir, "repo", "keygen", "k")
		return []string{"repo", "verify", "--index", c.base + "/endless/", "--public-key", "k.pub"}
	}},
	{name: "malformed signature of a big index", want: "index.yaml.sig is malformed", setup: func(c *corpus, dir string) []string {
		c.kbuildOutside(dir, "repo", "keygen", "k")
		f, _ := os.Create(filepath.Join(dir, "site", "index.yaml"))
		if f == nil {
			os.MkdirAll(filepath.Join(dir, "site"), 0o755)
			f, _ = os.Create(filepath.Join(dir, "site", "index.yaml"))
		}
		line := []byte("  - {name: x, version: 1.0.0}\n")
		f.WriteString("apiVersion: kubepkg.dev/v1\nkind: RepositoryIndex\npackages:\n  x:\n    versions:\n")
		for i := 0; i < (256<<20)/len(line); i++ {
			f.Write(line)
		}
		f.Close()
		write(dir, "site/index.yaml.sig", "signatures: [{keyid: nothex, sig: \"!!\"}]\n")
		return []string{"repo", "verify", "--index", "site/index.yaml", "--public-key", "k.pub"}
	}},
	{name: "root chain of 1000 junk roots", want: "root/1.yaml", setup: func(c *corpus, dir string) []string {
		c.kbuildOutside(dir, "repo", "keygen", "root")
		c.kbuildOutside(dir, "repo", "keygen", "k")
		c.kbuildOutside(dir, "trust", "root", "new", "--root-key", "root.pub", "--index-key", "k.pub", "-o", "gen/root.yaml")
		root, err := os.ReadFile(filepath.Join(dir, "gen", "root.yaml"))
		if err != nil {
			panic(err)
		}
		latest := bytes.Replace(root, []byte("version: 1\n"), []byte("version: 1000\n"), 1)
		junk := bytes.Repeat([]byte("junk "), (1<<20)/5)
		c.files["roots/root.yaml"] = latest
		c.files["roots/index.yaml"] = []byte("apiVersion: kubepkg.dev/v1\n")
		c.files["roots/index.yaml.sig"] = []byte("x\n")
		for v := 1; v <= 1000; v++ {
			c.files[fmt.Sprintf("roots/root/%d.yaml", v)] = junk
		}
		return []string{"repo", "verify", "--index", c.base + "/files/roots/", "--root-key", "root.pub"}
	}},
	{name: "gzip bomb source archive", want: "times its size", setup: func(c *corpus, dir string) []string {
		var tarball bytes.Buffer
		zw := gzip.NewWriter(&tarball)
		tw := tar.NewWriter(zw)
		const size = 300 << 20
		tw.WriteHeader(&tar.Header{Name: "zeros", Mode: 0o644, Size: size, Typeflag: tar.TypeReg})
		zero := make([]byte, 1<<20)
		for i := 0; i < size>>20; i++ {
			tw.Write(zero)
		}
		tw.Close()
		zw.Close()
		sum := sha256.Sum256(tarball.Bytes())
		c.files["bomb.tar.gz"] = tarball.Bytes()
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {url: %q, sha256: \"sha256:%x\"}}", c.base+"/files/bomb.tar.gz", sum), "{c: {from: [up]}}", variant))
		return []string{"build", "-o", "out", "--cache-dir", "cache", "."}
	}},
	{name: "url archive of 600,000 entries", want: "more than 200000 entries", setup: func(c *corpus, dir string) []string {
		// Headers only (empty files): 300 MB of tar in a few MB of gzip.
		var tarball bytes.Buffer
		zw := gzip.NewWriter(&tarball)
		tw := tar.NewWriter(zw)
		for i := 0; i < 600_000; i++ {
			tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%03d/f%06d", i%1000, i), Mode: 0o644, Typeflag: tar.TypeReg})
		}
		tw.Close()
		zw.Close()
		sum := sha256.Sum256(tarball.Bytes())
		c.files["many.tar.gz"] = tarball.Bytes()
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {url: %q, sha256: \"sha256:%x\"}}", c.base+"/files/many.tar.gz", sum), "{c: {from: [up]}}", variant))
		return []string{"build", "-o", "out", "--cache-dir", "cache", "."}
	}},
	{name: "template repeat 1500000000", want: "templates/bomb.yaml", setup: func(c *corpus, dir string) []string {
		chartDir(dir, `{{ repeat 1500000000 "x" }}`)
		return []string{"build", "-o", "out", "--cache-dir", "cache", "."}
	}},
	{name: "template range until 3000000", want: "templates/bomb.yaml", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "{{ range until 3000000 }}- {{ repeat 100 \"y\" }}\n{{ end }}")
		return []string{"build", "-o", "out", "--cache-dir", "cache", "."}
	}},
	{name: "outdated: endless listing", want: "more than the limit of", setup: func(c *corpus, dir string) []string {
		watched(dir, fmt.Sprintf("listing: {url: %q}", c.base+"/endless/pub/"))
		return []string{"outdated", "."}
	}},
	{name: "outdated: listing of 1,200,000 names", want: "more than 100000 entries", setup: func(c *corpus, dir string) []string {
		var b bytes.Buffer
		for i := 0; i < 1_200_000; i++ {
			fmt.Fprintf(&b, "<a href=\"1.%d.0/\">\n", i)
		}
		c.files["many/"] = b.Bytes()
		watched(dir, fmt.Sprintf("listing: {url: %q}", c.base+"/files/many/"))
		return []string{"outdated", "."}
	}},
	{name: "outdated: endless release pages", want: "past 20 pages", setup: func(c *corpus, dir string) []string {
		watched(dir, fmt.Sprintf("github: {repository: o/x, api: %q}", c.base+"/paged"))
		return []string{"outdated", "."}
	}},
	{name: "outdated: redirect off loopback", want: "redirects off loopback", setup: func(c *corpus, dir string) []string {
		watched(dir, fmt.Sprintf("listing: {url: %q}", c.base+"/away/"))
		return []string{"outdated", "."}
	}},
	{name: "outdated: stalled upstream", want: "no data for 3s", setup: func(c *corpus, dir string) []string {
		watched(dir, fmt.Sprintf("listing: {url: %q}", c.base+"/stall/pub/"))
		return []string{"outdated", "--timeout", "3s", "."}
	}},
	{name: "outdated: names that are not versions", want: "", setup: func(c *corpus, dir string) []string {
		c.files["junk/"] = []byte(`<a href="latest/">l</a><a href="nightly-20260101/">n</a><a href="main/">m</a>`)
		watched(dir, fmt.Sprintf("listing: {url: %q}", c.base+"/files/junk/"))
		return []string{"outdated", "."}
	}},
	{name: "bump: endless release pages", want: "past 20 pages", setup: func(c *corpus, dir string) []string {
		watched(dir, fmt.Sprintf("github: {repository: o/x, api: %q}", c.base+"/paged"))
		return []string{"bump", "--cache-dir", "cache", "."}
	}},
	{name: "xz with a 3 GiB dictionary", want: "dictionary of 3072 MiB", setup: func(c *corpus, dir string) []string {
		// A small .tar.xz written by the xz CLI whose block header then
		// asks for a 3 GiB LZMA2 dictionary (its CRC fixed).
		var tarball bytes.Buffer
		tw := tar.NewWriter(&tarball)
		tw.WriteHeader(&tar.Header{Name: "a.yaml", Mode: 0o644, Size: 2, Typeflag: tar.TypeReg})
		tw.Write([]byte("{}"))
		tw.Close()
		cmd := exec.Command("xz", "-c")
		cmd.Stdin = &tarball
		data, err := cmd.Output()
		if err != nil {
			panic(fmt.Sprintf("xz (xz-utils): %v", err))
		}
		size := int(data[12]+1) * 4
		h := data[12 : 12+size]
		i := bytes.Index(h, []byte{0x21, 0x01})
		h[i+2] = 39 // 3 GiB
		binary.LittleEndian.PutUint32(h[size-4:], crc32.ChecksumIEEE(h[:size-4]))
		sum := sha256.Sum256(data)
		c.files["dict.tar.xz"] = data
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {url: %q, sha256: \"sha256:%x\"}}", c.base+"/files/dict.tar.xz", sum), "{c: {from: [up]}}", variant))
		return []string{"fetch", "--cache-dir", "cache", "."}
	}},
	{name: "image manifest without end", want: "more than 4 MiB", setup: func(c *corpus, dir string) []string {
		host := strings.TrimPrefix(c.base, "http://")
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{local: {dir: chart}, img: {image: {ref: %q}}}", host+"/endless/x:1@"+pin), "{c: {from: [local]}}", variant))
		return []string{"fetch", "--cache-dir", "cache", "--plain-http", "."}
	}},
	{name: "oci chart manifest without end", want: "more than 4 MiB", setup: func(c *corpus, dir string) []string {
		host := strings.TrimPrefix(c.base, "http://")
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {chart: {repository: %q, name: app, version: 1.0.0, digest: %q}}}", "oci://"+host+"/endless", pin), "{c: {from: [up]}}", ""))
		return []string{"fetch", "--cache-dir", "cache", "--plain-http", "."}
	}},
	{name: "recipe with 190,000 values keys", want: "more than 10000 keys", setup: func(c *corpus, dir string) []string {
		// A flow mapping, so that 190,000 keys fit the recipe size limit.
		var b strings.Builder
		for i := 0; i < 190_000; i++ {
			fmt.Fprintf(&b, "k%x: 0, ", i)
		}
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		r := recipe("{local: {dir: chart}}", "{c: {from: [local], values: {"+b.String()+"}}}", variant)
		write(dir, "recipe.yaml", r)
		return []string{"validate", "--offline", "--cache-dir", "cache", "."}
	}},
	{name: "push: blob PATCH stalls half-way", want: "no response within 3s", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		return []string{"build", "-o", "out", "--cache-dir", "cache", "--registry", "oci://" + strings.TrimPrefix(c.base, "http://") + "/pushpatch", "--plain-http", "--timeout", "3s", "."}
	}},
	{name: "push: manifest PUT never answered", want: "no response within 3s", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		return []string{"build", "-o", "out", "--cache-dir", "cache", "--registry", "oci://" + strings.TrimPrefix(c.base, "http://") + "/pushput", "--plain-http", "--timeout", "3s", "."}
	}},
	{name: "slow drip, a byte a second", want: "slower than the 1024 KiB/s", setup: func(c *corpus, dir string) []string {
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {url: %q, sha256: %q}}", c.base+"/drip/x.yaml", pin), "{c: {from: [up]}}", variant))
		return []string{"fetch", "--cache-dir", "cache", "--timeout", "3s", "."}
	}},
	{name: "description with bidi controls", want: "U+202E", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		r := strings.Replace(recipe("{local: {dir: chart}}", "{c: {from: [local]}}", variant), "a hostile case", "safe \\u202egnp.exe \\u2066x\\u2069 \\u200b", 1)
		write(dir, "recipe.yaml", r)
		return []string{"validate", "--offline", "--cache-dir", "cache", "."}
	}},
	{name: "description with control characters", want: "U+0007", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		r := strings.Replace(recipe("{local: {dir: chart}}", "{c: {from: [local]}}", variant), "a hostile case", "bell \\x07 here", 1)
		write(dir, "recipe.yaml", r)
		return []string{"validate", "--offline", "--cache-dir", "cache", "."}
	}},
	{name: "description of 1 MB", want: "at most 1024", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		r := strings.Replace(recipe("{local: {dir: chart}}", "{c: {from: [local]}}", variant), "a hostile case", strings.Repeat("d", 1<<20), 1)
		write(dir, "recipe.yaml", r)
		return []string{"validate", "--offline", "--cache-dir", "cache", "."}
	}},
	{name: "archive 2,000 directories deep", want: "directories deep", setup: func(c *corpus, dir string) []string {
		var tarball bytes.Buffer
		zw := gzip.NewWriter(&tarball)
		tw := tar.NewWriter(zw)
		name := ""
		for i := 0; i < 2000; i++ {
			name += "d/"
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Typeflag: tar.TypeDir})
		}
		tw.WriteHeader(&tar.Header{Name: name + "f.yaml", Mode: 0o644, Typeflag: tar.TypeReg})
		tw.Close()
		zw.Close()
		sum := sha256.Sum256(tarball.Bytes())
		c.files["deep.tar.gz"] = tarball.Bytes()
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {url: %q, sha256: \"sha256:%x\"}}", c.base+"/files/deep.tar.gz", sum), "{c: {from: [up]}}", variant))
		return []string{"fetch", "--cache-dir", "cache", "."}
	}},
	{name: "archive 10,000 directories deep", want: "directories deep", setup: func(c *corpus, dir string) []string {
		// 10,000 nested directories, each its own entry, then a file at
		// the bottom: refused at the first entry too deep, at once (it
		// took 19 s and printed a 4.3 KB path).
		var tarball bytes.Buffer
		zw := gzip.NewWriter(&tarball)
		tw := tar.NewWriter(zw)
		name := ""
		for i := 0; i < 10_000; i++ {
			name += "d/"
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Typeflag: tar.TypeDir, Format: tar.FormatPAX})
		}
		tw.WriteHeader(&tar.Header{Name: name + "f.yaml", Mode: 0o644, Typeflag: tar.TypeReg, Format: tar.FormatPAX})
		tw.Close()
		zw.Close()
		sum := sha256.Sum256(tarball.Bytes())
		c.files["deeper.tar.gz"] = tarball.Bytes()
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {url: %q, sha256: \"sha256:%x\"}}", c.base+"/files/deeper.tar.gz", sum), "{c: {from: [up]}}", variant))
		return []string{"fetch", "--cache-dir", "cache", "."}
	}},
	{name: "bundle entry with a 300 KB name", want: "unexpected file", setup: func(c *corpus, dir string) []string {
		f, err := os.Create(filepath.Join(dir, "b.tar"))
		if err != nil {
			panic(err)
		}
		tw := tar.NewWriter(f)
		tw.WriteHeader(&tar.Header{Name: "blobs/../" + strings.Repeat("n", 300<<10), Mode: 0o644, Size: 1, Typeflag: tar.TypeReg, Format: tar.FormatPAX})
		tw.Write([]byte("x"))
		tw.Close()
		f.Close()
		return []string{"bundle", "inspect", "b.tar"}
	}},
	{name: "url source with a lying Content-Length", want: "sha256", never: "Unsolicited response", setup: func(c *corpus, dir string) []string {
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {url: %q, sha256: %q}}", c.base+"/lying/x.yaml", pin), "{c: {from: [up]}}", variant))
		return []string{"fetch", "--cache-dir", "cache", "."}
	}},
	{name: "push: 5xx on every manifest HEAD", want: "run again later", says: "retried", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		return []string{"build", "-o", "out", "--cache-dir", "cache", "--registry", "oci://" + strings.TrimPrefix(c.base, "http://") + "/busy", "--plain-http", "--timeout", "3s", "."}
	}},
	{name: "archive whose extraction was SIGKILLed", want: "was killed before it finished", setup: func(c *corpus, dir string) []string {
		// 150,000 empty files, SIGKILLed while they are written (as the
		// OOM killer or a CI deadline would): the re-run refuses the
		// archive at once instead of extracting it again.
		var tarball bytes.Buffer
		zw := gzip.NewWriter(&tarball)
		tw := tar.NewWriter(zw)
		for i := 0; i < 150_000; i++ {
			tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("d%03d/f%06d", i%500, i), Mode: 0o644, Typeflag: tar.TypeReg})
		}
		tw.Close()
		zw.Close()
		sum := sha256.Sum256(tarball.Bytes())
		c.files["killed.tar.gz"] = tarball.Bytes()
		write(dir, "recipe.yaml", recipe(fmt.Sprintf("{up: {url: %q, sha256: \"sha256:%x\"}}", c.base+"/files/killed.tar.gz", sum), "{c: {from: [up]}}", variant))
		cmd := exec.Command(c.kbuild, "fetch", "--cache-dir", "cache", ".")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
			markers, _ := filepath.Glob(filepath.Join(dir, "cache", "extracting", "*"))
			if len(markers) > 0 {
				if b, _ := os.ReadFile(markers[0]); len(b) > 0 {
					break
				}
			}
			if time.Since(start) > 5*time.Second {
				break // a kbuild that keeps no marker: killed all the same
			}
		}
		time.Sleep(200 * time.Millisecond)
		cmd.Process.Kill()
		if cmd.Wait() == nil {
			panic("kbuild fetch finished before it was killed")
		}
		return []string{"fetch", "--cache-dir", "cache", "."}
	}},
	{name: "a plain chart builds", want: "", setup: func(c *corpus, dir string) []string {
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		return []string{"build", "-o", "out", "--cache-dir", "cache", "."}
	}},
}
