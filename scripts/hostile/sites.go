package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The cases of published sites: index.yaml.sig as kubepkg reads it, big
// bases, root chains, and what a killed publish leaves.

// signedSite writes an empty index signed by k.key into dir/site with
// kbuild repo index (index.yaml, index.yaml.sig, by-hash/), the keys
// beside it, and returns the index's sha256 in hex.
func (c *corpus) signedSite(dir string, extra ...string) string {
	c.kbuildOutside(dir, "repo", "keygen", "k")
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	c.kbuildOutside(dir, append([]string{"repo", "index", "empty", "-o", "site/index.yaml", "--sign-key", "k.key"}, extra...)...)
	b, err := os.ReadFile(filepath.Join(dir, "site", "index.yaml"))
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// privateKey reads a PKCS #8 ed25519 key file kbuild repo keygen wrote.
func privateKey(file string) (ed25519.PrivateKey, string) {
	b, err := os.ReadFile(file)
	if err != nil {
		panic(err)
	}
	block, _ := pem.Decode(b)
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		panic(err)
	}
	priv := k.(ed25519.PrivateKey)
	der, _ := x509.MarshalPKIXPublicKey(priv.Public())
	sum := sha256.Sum256(der)
	return priv, hex.EncodeToString(sum[:])
}

func publicPEM(priv ed25519.PrivateKey) string {
	der, _ := x509.MarshalPKIXPublicKey(priv.Public())
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// rootChain writes n versions of a root of trust (root role: root.key,
// index role: k.key) into dir/site/root/ and root.yaml, each validly
// signed by root.key and padded with YAML comments (which signatures do
// not cover) to about pad bytes. It is written here, not with kbuild
// trust root, so that a thousand versions take no time.
func rootChain(dir string, n, pad int) {
	rootKey, rootID := privateKey(filepath.Join(dir, "root.key"))
	indexKey, indexID := privateKey(filepath.Join(dir, "k.key"))
	type role struct {
		KeyIDs    []string `json:"keyids"`
		Threshold int      `json:"threshold"`
	}
	type signed struct {
		Version int               `json:"version"`
		Expires time.Time         `json:"expires"`
		Keys    map[string]string `json:"keys"`
		Roles   map[string]role   `json:"roles"`
	}
	expires := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	keys := map[string]string{rootID: publicPEM(rootKey), indexID: publicPEM(indexKey)}
	indent := func(p string) string {
		return "      " + strings.ReplaceAll(strings.TrimSuffix(p, "\n"), "\n", "\n      ") + "\n"
	}
	os.MkdirAll(filepath.Join(dir, "site", "root"), 0o755)
	for v := 1; v <= n; v++ {
		s := signed{Version: v, Expires: expires, Keys: keys, Roles: map[string]role{"index": {[]string{indexID}, 1}, "root": {[]string{rootID}, 1}}}
		msg, _ := json.Marshal(s)
		sig := base64.StdEncoding.EncodeToString(ed25519.Sign(rootKey, msg))
		var b strings.Builder
		fmt.Fprintf(&b, "signed:\n  version: %d\n  expires: %q\n  keys:\n", v, expires.Format(time.RFC3339))
		ids := []string{rootID, indexID}
		if indexID < rootID {
			ids = []string{indexID, rootID}
		}
		for _, id := range ids {
			fmt.Fprintf(&b, "    %s: |\n%s", id, indent(keys[id]))
		}
		fmt.Fprintf(&b, "  roles:\n    index:\n      keyids:\n      - %s\n      threshold: 1\n    root:\n      keyids:\n      - %s\n      threshold: 1\n", indexID, rootID)
		fmt.Fprintf(&b, "signatures:\n- keyid: %s\n  sig: %s\n", rootID, sig)
		for b.Len() < pad {
			b.WriteString("# padding that no signature covers\n")
		}
		write(dir, fmt.Sprintf("site/root/%d.yaml", v), b.String())
		if v == n {
			write(dir, "site/root.yaml", b.String())
		}
	}
}

// publishedTwice publishes the recipe in dir at build 1 and then build 2
// into dir/site (a local OCI layout under dir/dist) and returns the index
// of the first publish.
func (c *corpus) publishedTwice(dir string) []byte {
	c.kbuildOutside(dir, "repo", "keygen", "k")
	chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	c.kbuildOutside(dir, publishArgs()...)
	first, err := os.ReadFile(filepath.Join(dir, "site", "index.yaml"))
	if err != nil {
		panic(err)
	}
	r, _ := os.ReadFile(filepath.Join(dir, "recipe.yaml"))
	write(dir, "recipe.yaml", strings.Replace(string(r), "build: 1", "build: 2", 1))
	c.kbuildOutside(dir, publishArgs()...)
	return first
}

// signedZeros writes dir/base/index.yaml, size zero bytes (a sparse file:
// no disk taken), validly signed by dir/k.key in dir/base/index.yaml.sig:
// a base of the size of a big index, which kbuild must refuse before it
// reads it when it cannot fit under the address-space cap.
func (c *corpus) signedZeros(dir string, size int64) {
	c.kbuildOutside(dir, "repo", "keygen", "k")
	os.MkdirAll(filepath.Join(dir, "base"), 0o755)
	f, err := os.Create(filepath.Join(dir, "base", "index.yaml"))
	if err != nil {
		panic(err)
	}
	if err := f.Truncate(size); err != nil {
		panic(err)
	}
	f.Close()
	priv, _ := privateKey(filepath.Join(dir, "k.key"))
	sig := ed25519.Sign(priv, make([]byte, size))
	write(dir, "base/index.yaml.sig", base64.StdEncoding.EncodeToString(sig)+"\n")
}

// attested writes, in dir, a suite "unstable" holding the recipe's chart
// under a root with a qa role (root.key, index.key, qa.key), a suite
// "testing" whose policy wants a pass on amd64, and evidence of a pass
// attested by kbuild with qa.key, then rewritten by change and signed
// again with qa.key, validly: only what it says is hostile. It returns
// kbuild promote's arguments into testing.
func (c *corpus) attested(dir string, change func(statement map[string]any)) []string {
	for _, k := range []string{"root", "index", "qa"} {
		c.kbuildOutside(dir, "repo", "keygen", k)
	}
	root := "site/unstable/root.yaml"
	c.kbuildOutside(dir, "trust", "root", "new", "--root-key", "root.pub", "--index-key", "index.pub", "--qa-key", "qa.pub", "-o", root)
	c.kbuildOutside(dir, "trust", "root", "sign", root, "--sign-key", "root.key")
	chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	c.kbuildOutside(dir, "build", "-o", "dist", "--cache-dir", "cache", ".")
	c.kbuildOutside(dir, "repo", "index", "dist", "-o", "site/unstable/index.yaml", "--sign-key", "index.key")
	write(dir, "suites.yaml", "apiVersion: kbuild.dev/v1\nkind: Suites\nsuites:\n  - name: unstable\n  - name: testing\n    policy: {kubernetesMinors: 1, architectures: [amd64], role: qa}\n")
	c.kbuildOutside(dir, "attest", "hostile@1.0.0", "--build", "1", "--result", "pass", "--env", "kubernetes=1.33,arch=amd64", "--passed", "install",
		"--sign-key", "qa.key", "--root", root, "--site", "site", "--suites", "suites.yaml")
	file := filepath.Join(dir, "site", "evidence", "hostile-1.0.0-1", "arch=amd64,kubernetes=1.33.intoto.json")
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     []byte `json:"payload"`
		Signatures  []struct {
			KeyID string `json:"keyid"`
			Sig   []byte `json:"sig"`
		} `json:"signatures"`
	}
	b, err := os.ReadFile(file)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, &env); err != nil {
		panic(err)
	}
	var st map[string]any
	if err := json.Unmarshal(env.Payload, &st); err != nil {
		panic(err)
	}
	change(st)
	env.Payload, _ = json.Marshal(st)
	qa, id := privateKey(filepath.Join(dir, "qa.key"))
	pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(env.PayloadType), env.PayloadType, len(env.Payload), env.Payload)
	env.Signatures = env.Signatures[:1]
	env.Signatures[0].KeyID, env.Signatures[0].Sig = id, ed25519.Sign(qa, []byte(pae))
	b, _ = json.MarshalIndent(env, "", "  ")
	write(dir, "site/evidence/hostile-1.0.0-1/arch=amd64,kubernetes=1.33.intoto.json", string(b))
	return []string{"promote", "hostile@1.0.0", "--build", "1", "--to", "testing", "--root", root, "--site", "site", "--suites", "suites.yaml", "--sign-key", "index.key", "--allow-new"}
}

// evidenceNote returns the kbuild.dev/evidence annotations of a statement.
func evidenceNote(st map[string]any) map[string]any {
	for _, c := range st["predicate"].(map[string]any)["configuration"].([]any) {
		if c := c.(map[string]any); c["name"] == "kbuild.dev/evidence" {
			return c["annotations"].(map[string]any)
		}
	}
	panic("no kbuild.dev/evidence configuration")
}

func publishArgs() []string {
	return []string{"publish", ".", "--site", "site", "--sign-key", "k.key", "-o", "dist", "--cache-dir", "cache"}
}

var siteCases = []hostileCase{
	{name: "index.yaml.sig missing, good by-hash", want: "index.yaml.sig is missing or empty", says: "kubepkg never reads it", setup: func(c *corpus, dir string) []string {
		sum := c.signedSite(dir)
		os.Remove(filepath.Join(dir, "site", "index.yaml.sig"))
		if _, err := os.Stat(filepath.Join(dir, "site", "by-hash", "sha256", sum+".sig")); err != nil {
			panic("repo index wrote no signature by digest: " + err.Error())
		}
		return []string{"repo", "verify", "--index", "site/index.yaml", "--public-key", "k.pub"}
	}},
	{name: "index.yaml.sig garbage, good by-hash", want: "index.yaml.sig is malformed", setup: func(c *corpus, dir string) []string {
		c.signedSite(dir)
		write(dir, "site/index.yaml.sig", "<html>not found</html>\n")
		return []string{"repo", "verify", "--index", "site/index.yaml", "--public-key", "k.pub"}
	}},
	{name: "index.yaml.sig made by the root key", want: "is a root key", setup: func(c *corpus, dir string) []string {
		c.kbuildOutside(dir, "repo", "keygen", "root")
		c.signedSite(dir)
		rootChain(dir, 1, 0)
		c.kbuildOutside(dir, "repo", "index", "empty", "-o", "site/index.yaml", "--sign-key", "root.key")
		return []string{"repo", "verify", "--index", "site/index.yaml", "--root-key", "root.pub"}
	}},
	{name: "publish --index over a big base with a garbage signature", want: "index.yaml.sig is malformed", setup: func(c *corpus, dir string) []string {
		c.kbuildOutside(dir, "repo", "keygen", "k")
		os.MkdirAll(filepath.Join(dir, "base"), 0o755)
		f, err := os.Create(filepath.Join(dir, "base", "index.yaml"))
		if err != nil {
			panic(err)
		}
		f.WriteString("apiVersion: kubepkg.dev/v1\nkind: RepositoryIndex\npackages:\n  x:\n    versions:\n")
		line := []byte("  - {name: x, version: 1.0.0}\n")
		chunk := bytes.Repeat(line, (1<<20)/len(line))
		for i := 0; i < 384; i++ {
			f.Write(chunk)
		}
		f.Close()
		write(dir, "base/index.yaml.sig", "signatures: [{keyid: nothex, sig: \"!!\"}]\n")
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		return append(publishArgs(), "--index", "base/index.yaml", "--public-key", "k.pub")
	}},
	{name: "repo verify of a validly signed 347 MB base", want: "the limit (ulimit -v) is 1024 MiB", code: 3, setup: func(c *corpus, dir string) []string {
		c.signedZeros(dir, 346_843_021) // 100,000 realistic versions
		return []string{"repo", "verify", "--index", "base/index.yaml", "--public-key", "k.pub"}
	}},
	{name: "repo verify of a validly signed 686 MB base", want: "the limit (ulimit -v) is 1024 MiB", code: 3, setup: func(c *corpus, dir string) []string {
		c.signedZeros(dir, 686_260_131) // 1,000,000 small versions
		return []string{"repo", "verify", "--index", "base/index.yaml", "--public-key", "k.pub"}
	}},
	{name: "publish --index over a validly signed 347 MB base", want: "the limit (ulimit -v) is 1024 MiB", code: 3, setup: func(c *corpus, dir string) []string {
		c.signedZeros(dir, 346_843_021)
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		return append(publishArgs(), "--index", "base/index.yaml", "--public-key", "k.pub")
	}},
	{name: "publish --index over a validly signed 104 MB base", want: "the limit (ulimit -v) is 1024 MiB", code: 3, setup: func(c *corpus, dir string) []string {
		c.signedZeros(dir, 104_052_921) // 30,000 realistic versions: ran out of memory at 1 GiB
		chartDir(dir, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
		return append(publishArgs(), "--index", "base/index.yaml", "--public-key", "k.pub")
	}},
	{name: "evidence, validly signed, issued in 2099", want: "in the future", code: 3, setup: func(c *corpus, dir string) []string {
		return c.attested(dir, func(st map[string]any) {
			n := evidenceNote(st)
			n["issued"], n["expires"] = "2099-01-01T00:00:00Z", "2099-06-01T00:00:00Z"
		})
	}},
	{name: "evidence, validly signed, a pass listing a failed test", want: "failedTests", code: 3, setup: func(c *corpus, dir string) []string {
		return c.attested(dir, func(st map[string]any) {
			st["predicate"].(map[string]any)["failedTests"] = []string{"install"}
		})
	}},
	{name: "evidence re-signed unchanged promotes", want: "", setup: func(c *corpus, dir string) []string {
		return c.attested(dir, func(map[string]any) {})
	}},
	{name: "root chain of 1000 signed 0.9 MiB roots", want: "more than the 131072 allowed", setup: func(c *corpus, dir string) []string {
		c.kbuildOutside(dir, "repo", "keygen", "root")
		c.signedSite(dir)
		rootChain(dir, 1000, 900<<10)
		return []string{"repo", "verify", "--index", "site/index.yaml", "--root-key", "root.pub"}
	}},
	{name: "root chain of 1000 signed 20 KiB roots", want: "MaxRootChainSize", setup: func(c *corpus, dir string) []string {
		c.kbuildOutside(dir, "repo", "keygen", "root")
		c.signedSite(dir)
		rootChain(dir, 1000, 20<<10)
		return []string{"repo", "verify", "--index", "site/index.yaml", "--root-key", "root.pub"}
	}},
	{name: "a killed publish's temporary file", says: "provenance/.p3-1.0.0-1.intoto.json.tmp-", setup: func(c *corpus, dir string) []string {
		c.publishedTwice(dir)
		write(dir, "site/provenance/.p3-1.0.0-1.intoto.json.tmp-4711", "half a file")
		return publishArgs()
	}},
	{name: "a torn index.yaml and index.yaml.sig", says: "restored it from by-hash/sha256/", setup: func(c *corpus, dir string) []string {
		first := c.publishedTwice(dir)
		// A kill between the two renames of an earlier kbuild: the new
		// signature beside the old index.
		write(dir, "site/index.yaml", string(first))
		return publishArgs()
	}},
}
