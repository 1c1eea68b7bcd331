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
