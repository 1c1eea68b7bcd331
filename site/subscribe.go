package site

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"kbuild.dev/kbuild/sitelayout"
)

// Subscribe snippets: what a reader pastes to install from the
// repository. Each is decoded strictly into the real API types in
// subscribe_test.go, so a field that is misspelt or in the wrong place
// fails the tests rather than a reader's cluster.

// clusterAPIVersion is the version of kubepkg's cluster API (Repository,
// Package). It is not the index format's version, kubepkg.dev/v1alpha1.
const clusterAPIVersion = "kubepkg.dev/v1"

// repositorySnippet is the kubepkg Repository of this site, with its keys
// inlined, and the kubepkg repo add command that makes the same object.
func repositorySnippet(o *options, root string) snippet {
	base, ph := siteURL(o)
	name := yamlName(o.title)
	var after, cmd strings.Builder
	switch {
	case len(o.rootKeys) > 0:
		fmt.Fprintf(&after, "\n  trust:\n    rootThreshold: %d\n    rootKeys:", max(o.rootThreshold, 1))
		writePEMList(&after, "      ", o.rootKeys)
		for i := range o.rootKeys {
			fmt.Fprintf(&cmd, " --root-key %s", path.Base(rootKeyFile(i)))
		}
		fmt.Fprintf(&cmd, " --root-threshold %d", max(o.rootThreshold, 1))
	case len(o.publicKeys) > 0:
		after.WriteString("\n  publicKeys:")
		writePEMList(&after, "    ", o.publicKeys)
		cmd.WriteString(" --public-key index.pub")
	default:
		after.WriteString("\n  # publicKeys: the PEM public keys that sign index.yaml (keys/*.pub beside it)")
		cmd.WriteString(" --public-key index.pub")
	}
	var keys []link
	for _, k := range keyFiles(o) {
		keys = append(keys, link{Href: root + k, Text: k})
	}
	return snippet{
		Keys:        keys,
		Before:      fmt.Sprintf("apiVersion: %s\nkind: Repository\nmetadata:\n  name: %s\nspec:\n  url: ", clusterAPIVersion, name),
		SiteURL:     base + "/index.yaml",
		Placeholder: ph,
		RelIndex:    root + sitelayout.IndexFile,
		After:       after.String() + "\n",
		CmdBefore:   "# or, with the key file(s) saved beside you:\nkubepkg repo add " + name + " ",
		CmdAfter:    cmd.String(),
	}
}

// rootKeyFile is the site path of the PEM of root key i (from 0), which
// Write publishes so that the kubepkg repo add command names files a
// subscriber can download.
func rootKeyFile(i int) string { return fmt.Sprintf("keys/root-key-%d.pub", i+1) }

// keyFiles are the site paths of the key files the snippets name: the
// root keys Write publishes, or keys/index.pub, which publish writes
// when one key signs the index.
func keyFiles(o *options) []string {
	var out []string
	switch {
	case len(o.rootKeys) > 0:
		for i := range o.rootKeys {
			out = append(out, rootKeyFile(i))
		}
	case len(o.publicKeys) == 1:
		out = append(out, "keys/index.pub")
	}
	return out
}

// writePEMList writes keys as a YAML list of literal blocks at indent.
func writePEMList(b *strings.Builder, indent string, keys []string) {
	for _, k := range keys {
		fmt.Fprintf(b, "\n%s- |", indent)
		for _, line := range strings.Split(strings.TrimRight(k, "\n"), "\n") {
			fmt.Fprintf(b, "\n%s  %s", indent, line)
		}
	}
}

// packageSnippet is the Repository and a Package installing version from
// it.
func packageSnippet(o *options, name, version string) snippet {
	s := repositorySnippet(o, "../")
	s.After += fmt.Sprintf("---\napiVersion: %s\nkind: Package\nmetadata:\n  name: %s\nspec:\n  version: %s\n  repository: %s",
		clusterAPIVersion, name, yamlQuote(version), yamlName(o.title))
	return s
}

// gitOps is what the Flux and Argo CD snippets of one chart say: the
// objects' name (unique across the packages of a repository), the chart
// repository, what to take from it (a manifest digest, or a version range
// over a suite's followable repository), the Helm release and namespace,
// and the Secret holding the repository's public key for cosign.
type gitOps struct {
	object, repo, digest, semver, release, namespace, keySecret string
	// issuer and subject: the keyless identity (WithKeyless), when the
	// charts carry keyless signatures; verify then pins it.
	issuer, subject, repository string
}

// cosignVerifyKeyless is the cosign verify line of ref for the keyless
// identity of g: exactly that subject and issuer.
func cosignVerifyKeyless(g gitOps, ref string) string {
	s := "cosign verify " + shellQuote(ref) + " \\\n  --certificate-identity " + shellQuote(g.subject) + " \\\n  --certificate-oidc-issuer " + shellQuote(g.issuer)
	if g.repository != "" {
		s += " \\\n  --certificate-github-workflow-repository " + shellQuote(g.repository)
	}
	return s
}

// sharedSubject reports whether the keyless subject is a workflow of
// another repository than the one whose job signed (a reusable workflow,
// such as kbuild's reusable-publish.yml): every repository calling it is
// certified for the same subject.
func (g gitOps) sharedSubject() bool {
	return g.repository != "" && !strings.HasPrefix(g.subject, "https://github.com/"+g.repository+"/")
}

// fluxVerify is the verify block of the OCIRepository: the keyless
// identity pinned by anchored regular expressions when the charts carry
// keyless signatures, else the Secret holding the repository's key.
func fluxVerify(g gitOps) string {
	if g.subject != "" {
		return fmt.Sprintf(`  verify:
    provider: cosign
    matchOIDCIdentity:
      - issuer: %s
        subject: %s`, yamlQuote("^"+regexp.QuoteMeta(g.issuer)+"$"), yamlQuote("^"+regexp.QuoteMeta(g.subject)+"$"))
	}
	return fmt.Sprintf(`  verify:
    provider: cosign
    secretRef:
      name: %s`, yamlQuote(g.keySecret))
}

// FollowRange is the version range the follow snippets give: every build,
// newest first (kbuild's chart versions carry the build number as a
// prerelease, 1.9.0-4, which a range without -0 would not match).
const FollowRange = ">=0.0.0-0"

// objectName is the name of the Flux and Argo CD objects of component
// release of package pkg: "pkg.release", or pkg when they are the same.
// Package and release names are DNS labels, without '.', so two
// packages' objects never share a name (a "controller" release in each).
func objectName(pkg, release string) string {
	if release == pkg {
		return pkg
	}
	return pkg + "." + release
}

// fluxSnippet is a Flux OCIRepository of the chart, pinned by manifest
// digest or following a version range, verified with cosign against the
// repository's public key, and the HelmRelease installing it.
func fluxSnippet(g gitOps) string {
	var b strings.Builder
	ref := "digest: " + g.digest
	if g.semver != "" {
		ref = "semver: " + yamlQuote(g.semver)
	}
	if g.subject != "" {
		b.WriteString("# verified keylessly: each chart's certificate names the workflow that signed it\n")
		if g.sharedSubject() {
			fmt.Fprintf(&b, "# (a reusable workflow: every repository calling it has this subject, and Flux cannot\n#  pin the repository %s; verify with cosign, or sign from a workflow of %s)\n", g.repository, g.repository)
		}
	} else {
		fmt.Fprintf(&b, `# the repository's public key (keys/index.pub of this site), for cosign:
#   kubectl -n flux-system create secret generic %s --from-file=cosign.pub=index.pub
`, yamlQuote(g.keySecret))
	}
	fmt.Fprintf(&b, `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: %[1]s
  namespace: flux-system
spec:
  interval: 1h
  url: %[2]s
  ref:
    %[3]s
  layerSelector:
    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip
    operation: copy
%[5]s
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: %[1]s
  namespace: flux-system
spec:
  interval: 1h
  releaseName: %[4]s
  chartRef:
    kind: OCIRepository
    name: %[1]s`, yamlQuote(g.object), yamlQuote(g.repo), ref, yamlQuote(g.release), fluxVerify(g))
	if g.namespace != "" {
		fmt.Fprintf(&b, "\n  targetNamespace: %s\n  install:\n    createNamespace: true", yamlQuote(g.namespace))
	}
	return b.String()
}

// argoCDSnippet is an Argo CD Application of the chart, pinned by its
// manifest digest or following a version range (Argo CD 3.1 and later
// read oci:// sources).
func argoCDSnippet(g gitOps) string {
	ns := g.namespace
	if ns == "" {
		ns = "default"
	}
	rev := g.digest
	if g.semver != "" {
		rev = yamlQuote(g.semver)
	}
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %[1]s
  namespace: argocd
spec:
  project: default
  source:
    repoURL: %[2]s
    targetRevision: %[3]s
    path: .
    helm:
      releaseName: %[4]s
  destination:
    server: https://kubernetes.default.svc
    namespace: %[5]s
  syncPolicy:
    syncOptions:
      - CreateNamespace=true`, yamlQuote(g.object), yamlQuote(g.repo), rev, yamlQuote(g.release), yamlQuote(ns))
}

// yamlQuote double-quotes s when YAML would not read it back as the same
// plain string: other characters than the plain ones, a leading '-', '.'
// or ':', and words or numbers YAML resolves to another type.
func yamlQuote(s string) string {
	plain := s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-./:_") == "" && !strings.ContainsAny(s[:1], "-.:")
	switch s {
	case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		plain = false
	}
	if _, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64); err == nil || strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0o") {
		plain = false
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}
