package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/cli"
)

// term is one word of kbuild's flag vocabulary: a flag name means the same
// thing, with the same type and shorthand, in every command that has it.
// A command's usage text must contain the meaning; it may say more.
type term struct {
	shorthand, typ, meaning string
}

// vocabulary is every visible flag name of kbuild. Add a flag here before
// adding it to a command, and reuse a name only with its meaning. Old
// spellings are not here: they are hidden aliases (cli.AddAlias).
var vocabulary = map[string]term{
	// Published index input, and the keys that verify it.
	"index":          {"", "string", "the published index `REF` (site directory, index.yaml or http(s) URL)"},
	"public-key":     {"", "stringArray", "public key `FILE` (PEM)"},
	"threshold":      {"", "int", "how many distinct --public-key keys must have signed"},
	"root-key":       {"", "stringArray", "root public key `FILE`"},
	"root-threshold": {"", "int", "root signatures needed"},
	"index-root":     {"", "string", "your root.yaml `FILE`: verify --index under it"},
	"allow-new":      {"", "bool", "start a new index when"},
	"root":           {"", "string", "root.yaml"},

	// Signing.
	"sign-key":     {"", "stringArray", "private key `FILE` (PEM) that signs"},
	"sign-key-env": {"", "string", "name of an environment variable `VAR` holding a private key (PEM) that signs"},
	"keyless":      {"", "bool", "also sign each chart for cosign keylessly"},
	"fulcio-url":   {"", "string", "Fulcio `URL`"},
	"rekor-url":    {"", "string", "Rekor `URL`"},
	"trusted-root": {"", "string", "Sigstore trusted_root.json `FILE`"},

	// Output: -o is a path, --format a format.
	"output": {"o", "string", "write "},
	"format": {"", "string", "output `FORMAT`: "},

	// Network, parallelism.
	"timeout":         {"", "duration", "when it sends nothing for this long"},
	"plain-http":      {"", "bool", "talk plain HTTP to OCI registries on loopback (never to other registries)"},
	"plain-http-host": {"", "stringArray", "also talk plain HTTP to this registry HOST[:PORT]"},
	"jobs":            {"j", "int", "at once; 0 (the default) is one per CPU"},

	// Sources and their cache.
	"cache-dir":       {"", "string", "source cache `DIR`"},
	"offline":         {"", "bool", "use only the source cache; never touch the network"},
	"max-download":    {"", "int64", "refuse any download larger than this many bytes"},
	"plugin-timeout":  {"", "duration", "end a source or step plugin (and its process group) that runs longer than this"},
	"registry-config": {"", "string", "Docker config file `FILE` with registry credentials"},

	// Trivy.
	"trivy":           {"", "string", "the trivy program `PATH`"},
	"trivy-cache-dir": {"", "string", "Trivy's cache directory `DIR`"},
	"trivy-offline":   {"", "bool", "use the vulnerability DB in --trivy-cache-dir as it is"},

	// Building.
	"registry":     {"", "string", "push charts to oci://HOST/PATH"},
	"kube-version": {"", "string", "render charts as for this Kubernetes version"},
	"work-dir":     {"", "string", "build each recipe in `DIR`/<package>"},
	"adopt":        {"", "bool", "keep a chart another tool (kubepkg) already published"},
	"rebuild":      {"", "bool", "rebuild published versions too"},

	// Sites and suites.
	"site":        {"", "string", "site directory `DIR`"},
	"suites":      {"", "string", "the suites file"},
	"suite":       {"", "string", "suite whose index is read"},
	"expires":     {"", "duration", "how long "},
	"no-expiry":   {"", "bool", "never expires"},
	"title":       {"", "string", "title of the catalog"},
	"scan-report": {"", "string", "kbuild scan --format json report"},
	"site-keep":   {"", "int", "keep the SBOM and provenance files of the newest `N` versions"},
	"build":       {"", "int", "build number of the version"},

	// Rebuilding with another kbuild.
	"other-kbuild": {"", "bool", "compare versions that another kbuild release built"},

	// Command-specific flags: one command each.
	"addr":                     {"", "string", "address to listen on"},
	"archive":                  {"", "string", "the chart archive `FILE` (.tgz)"},
	"base":                     {"", "string", "git commit, branch or tag of the recipes repository"},
	"chart":                    {"", "string", "upstream chart as REPO/NAME@VERSION"},
	"charts":                   {"", "bool", "also pull every chart and check its archive digest"},
	"delegate":                 {"", "stringArray", "NAME=PATTERN[,PATTERN]"},
	"delegate-key":             {"", "stringArray", "NAME=FILE: a key of delegation NAME"},
	"delegate-threshold":       {"", "stringArray", "NAME=N: signatures delegation NAME needs"},
	"env":                      {"", "string", "the environment tested"},
	"evidence":                 {"", "string", "directory `DIR` of test evidence"},
	"fail-on":                  {"", "string", "exit 1 when an image has a vulnerability of this severity or higher"},
	"fail-on-immutable-change": {"", "bool", "exit 1 when the recipe's version and build are published with other content"},
	"failed":                   {"", "stringSlice", "names of the tests that failed"},
	"help":                     {"h", "bool", "show this help"},
	"image-source":             {"", "string", "pull images from oci://HOST/PATH/<registry>/<repository>"},
	"index-key":                {"", "stringArray", "public key `FILE` of the index role"},
	"index-threshold":          {"", "int", "index signatures needed"},
	"layout":                   {"", "string", "OCI image layout `DIR` to serve"},
	"log":                      {"", "string", "http(s) URL of the test run"},
	// kbuild test: the cluster and what the run writes.
	"kubeconfig":          {"", "string", "kubeconfig `FILE`"},
	"context":             {"", "string", "kubeconfig context"},
	"variant":             {"", "string", "variant of the target to install"},
	"from":                {"", "string", "upgrade from `VERSION+build.M`"},
	"no-upgrade":          {"", "bool", "skip the upgrade and rollback phases"},
	"wait":                {"", "duration", "deadline of each Helm action and of each object's readiness"},
	"junit":               {"", "string", "write the result as JUnit XML to `FILE`"},
	"summary":             {"", "string", "append a Markdown summary to `FILE`"},
	"log-file":            {"", "string", "write the whole log to `FILE`"},
	"untested":            {"", "string", "list the index's builds with no evidence in `DIR`"},
	"attest":              {"", "bool", "sign the result as test evidence"},
	"manifest":            {"", "stringArray", "URL of an upstream manifest file"},
	"mirror":              {"", "string", "mirror registry and path, oci://HOST/PATH"},
	"name":                {"", "string", "package name"},
	"namespace":           {"", "string", "install namespace of the components"},
	"node-config":         {"", "string", "directory `DIR` to write containerd, Talos and CRI-O settings to"},
	"passed":              {"", "stringSlice", "names of the tests that passed"},
	"platform":            {"", "stringArray", "keep only this platform of multi-platform images"},
	"provenance":          {"", "string", "the DSSE envelope `FILE` (.intoto.json)"},
	"push":                {"", "bool", "also attach the evidence to the charts in the registry"},
	"qa-key":              {"", "stringArray", "public key `FILE` of the qa role"},
	"qa-threshold":        {"", "int", "qa signatures one piece of evidence needs"},
	"reason":              {"", "string", "why, shown in the catalog"},
	"relocate":            {"", "stringArray", "oci://OLD=oci://NEW"},
	"result":              {"", "string", "pass or fail"},
	"shards":              {"", "int", "split the recipes to build into at most this many shards"},
	"state":               {"", "string", "file `FILE` recording the last accepted index and root"},
	"to":                  {"", "string", "the suite to promote into"},
	"undelegate":          {"", "stringArray", "remove delegation NAME"},
	"url":                 {"", "string", "the http(s) `URL` FILE was downloaded from"},
	"verify":              {"", "bool", "also pull every chart the build records in DIST pin"},
	"version":             {"", "string", "upstream version"},
	"with-image-contents": {"", "bool", "nest each pinned image's contents"},
	"write":               {"", "bool", "rewrite the recipe's images: block in place"},
}

// leaf is a command that runs, with its path.
type leaf struct {
	path []string
	cmd  *Command
}

func leaves() []leaf {
	var out []leaf
	var walk func(path []string, cs []*Command)
	walk = func(path []string, cs []*Command) {
		for _, c := range cs {
			p := append(append([]string{}, path...), c.Name())
			if len(c.Subcommands) > 0 {
				walk(p, c.Subcommands)
				continue
			}
			out = append(out, leaf{p, c})
		}
	}
	walk(nil, commands())
	return out
}

// TestFlagVocabulary walks every command's flags: each visible flag must be
// in the vocabulary with its type, shorthand and meaning, and each hidden
// flag must be an old spelling of a visible one.
func TestFlagVocabulary(t *testing.T) {
	used := map[string]bool{}
	for _, l := range leaves() {
		fs, _ := l.cmd.FlagSet(append([]string{"kbuild"}, l.path...))
		for _, p := range vocabularyProblems(fs, used) {
			t.Errorf("%s: %s", strings.Join(l.path, " "), p)
		}
	}
	for n := range vocabulary {
		if !used[n] {
			t.Errorf("--%s is in the vocabulary but no command has it; delete it", n)
		}
	}
}

// vocabularyProblems returns how the flags of fs depart from the
// vocabulary, and records in used the names they use.
func vocabularyProblems(fs *pflag.FlagSet, used map[string]bool) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			target := fs.Lookup(strings.Join(f.Annotations[cli.AliasOf], ""))
			switch {
			case !isAlias(f):
				out = append(out, fmt.Sprintf("--%s is hidden but no old spelling of another flag", f.Name))
			case target == nil || target.Hidden:
				out = append(out, fmt.Sprintf("--%s is an old spelling of --%s, which is not a visible flag", f.Name, f.Annotations[cli.AliasOf][0]))
			case target.Value.Type() != f.Value.Type():
				out = append(out, fmt.Sprintf("--%s has type %s, its new spelling --%s %s", f.Name, f.Value.Type(), target.Name, target.Value.Type()))
			}
			return
		}
		used[f.Name] = true
		v, ok := vocabulary[f.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("--%s (%q) is not in the flag vocabulary; reuse a flag of the same meaning, or add it to vocabulary_test.go", f.Name, f.Usage))
		case f.Value.Type() != v.typ:
			out = append(out, fmt.Sprintf("--%s has type %s, the vocabulary says %s", f.Name, f.Value.Type(), v.typ))
		case f.Shorthand != v.shorthand:
			out = append(out, fmt.Sprintf("--%s has shorthand %q, the vocabulary says %q", f.Name, f.Shorthand, v.shorthand))
		case !strings.Contains(f.Usage, v.meaning):
			out = append(out, fmt.Sprintf("--%s means %q, but the vocabulary's meaning is %q", f.Name, f.Usage, v.meaning))
		}
	})
	return out
}

// TestFlagVocabularyCatchesDrift proves the walk can fail: a flag outside
// the vocabulary, one with another type, shorthand or meaning.
func TestFlagVocabularyCatchesDrift(t *testing.T) {
	for _, tc := range []struct {
		name string
		def  func(fs *pflag.FlagSet)
		want string
	}{
		{"unknown", func(fs *pflag.FlagSet) { fs.String("merge", "", "published index") }, "not in the flag vocabulary"},
		{"type", func(fs *pflag.FlagSet) { fs.String("public-key", "", "public key (PEM)") }, "has type string"},
		{"shorthand", func(fs *pflag.FlagSet) { fs.IntP("jobs", "J", 0, "x at once; 0 (the default) is one per CPU") }, `shorthand "J"`},
		{"meaning", func(fs *pflag.FlagSet) { fs.StringP("output", "o", "text", "output `FORMAT`: text or json") }, "but the vocabulary's meaning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			tc.def(fs)
			got := strings.Join(vocabularyProblems(fs, map[string]bool{}), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("vocabularyProblems = %q, want it to say %q", got, tc.want)
			}
		})
	}
}
