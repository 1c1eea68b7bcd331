package main

import (
	"context"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/provenance"
)

func newVerifyProvenanceCmd() *Command {
	var (
		provenanceFile, archive string
		publicKeys              []string
	)
	return &Command{
		Use:     "verify-provenance --archive CHART.tgz --provenance FILE --public-key FILE",
		Summary: "Check a chart archive against its signed build provenance.",
		Help: `verify-provenance checks that FILE is a DSSE envelope of an in-toto statement
with an SLSA v1 provenance predicate, signed by the repository key, whose
subjects include the sha256 of CHART.tgz. It prints what the chart was built
from: the recipe, its commit, every upstream source with its digest and the
builder. Provenance is attached to each chart in the registry as an OCI
referrer (artifactType application/vnd.in-toto+json), for every version, and
published beside the index as provenance/<package>-<version>-<build>.intoto.json
for the newest 10 versions of each package (kbuild publish --site-keep).

Examples:
  # check a pulled chart against the published provenance
  helm pull oci://ghcr.io/acme/packages/kubevirt/kubevirt-operator --version 1.9.0-1
  curl -sO https://acme.github.io/packages/provenance/kubevirt-1.9.0-1.intoto.json
  kbuild verify-provenance --archive kubevirt-operator-1.9.0-1.tgz \
    --provenance kubevirt-1.9.0-1.intoto.json --public-key keys/index.pub

  # an older version, whose file the site no longer holds: from the registry
  # (test evidence is in-toto too; the provenance's one layer is the envelope)
  oras discover --artifact-type application/vnd.in-toto+json \
    ghcr.io/acme/packages/kubevirt/kubevirt-operator:1.8.0-1
  oras manifest fetch ghcr.io/acme/packages/kubevirt/kubevirt-operator@REFERRER
  oras blob fetch --output kubevirt-1.8.0-1.intoto.json \
    ghcr.io/acme/packages/kubevirt/kubevirt-operator@LAYER`,
		Flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&archive, "archive", "", "the chart archive `FILE` (.tgz) to check")
			fs.StringVar(&provenanceFile, "provenance", "", "the DSSE envelope `FILE` (.intoto.json)")
			fs.StringArrayVar(&publicKeys, "public-key", nil, "public key `FILE` (PEM) of the repository, trusted to sign the provenance; repeat for several (one must have signed)")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 0 || archive == "" || provenanceFile == "" || len(publicKeys) == 0 {
				return usagef("--archive, --provenance and --public-key are required")
			}
			st, key, err := provenance.VerifyArchiveFile(archive, provenanceFile, publicKeys)
			if err != nil {
				return err
			}
			return st.WriteText(env.Stdout, archive, key)
		},
	}
}
