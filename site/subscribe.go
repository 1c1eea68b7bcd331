package site

import (
	"fmt"
	"strconv"
	"strings"
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
			fmt.Fprintf(&cmd, " --root-key root-key-%d.pub", i+1)
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
	return snippet{
		Before:      fmt.Sprintf("apiVersion: %s\nkind: Repository\nmetadata:\n  name: %s\nspec:\n  url: ", clusterAPIVersion, name),
		SiteURL:     base + "/index.yaml",
		Placeholder: ph,
		RelIndex:    root + "index.yaml",
		After:       after.String() + "\n",
		CmdBefore:   "# or, with the key file(s) saved beside you:\nkubepkg repo add " + name + " ",
		CmdAfter:    cmd.String(),
	}
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

// fluxSnippet is a Flux OCIRepository pinned by the chart's manifest
// digest and the HelmRelease installing it.
func fluxSnippet(repo, manifest, release, namespace string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: %[1]s
  namespace: flux-system
spec:
  interval: 1h
  url: %[2]s
  ref:
    digest: %[3]s
  layerSelector:
    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip
    operation: copy
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: %[1]s
  namespace: flux-system
spec:
  interval: 1h
  releaseName: %[1]s
  chartRef:
    kind: OCIRepository
    name: %[1]s`, yamlQuote(release), yamlQuote(repo), manifest)
	if namespace != "" {
		fmt.Fprintf(&b, "\n  targetNamespace: %s\n  install:\n    createNamespace: true", yamlQuote(namespace))
	}
	return b.String()
}

// argoCDSnippet is an Argo CD Application of the chart, pinned by its
// manifest digest (Argo CD 3.1 and later read oci:// sources).
func argoCDSnippet(repo, manifest, release, namespace string) string {
	ns := namespace
	if ns == "" {
		ns = "default"
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
      releaseName: %[1]s
  destination:
    server: https://kubernetes.default.svc
    namespace: %[4]s
  syncPolicy:
    syncOptions:
      - CreateNamespace=true`, yamlQuote(release), yamlQuote(repo), manifest, yamlQuote(ns))
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
