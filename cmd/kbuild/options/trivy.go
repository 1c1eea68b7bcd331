package options

import (
	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/cmd/kbuild/cli"
	"kbuild.dev/kbuild/sbom"
)

// TrivyFlags are the flags of the commands that run Trivy: the program,
// its cache and (for scans) whether it may update its database. They are
// named --trivy-*, apart from the source cache's --cache-dir and
// --offline.
type TrivyFlags struct {
	Path     string
	CacheDir string
	Offline  bool
}

// AddFlags adds --trivy and --trivy-cache-dir, and the old spelling
// --cache-dir of the latter.
func (f *TrivyFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Path, "trivy", "", "the trivy program `PATH` (default: trivy on $PATH)")
	fs.StringVar(&f.CacheDir, "trivy-cache-dir", "", "Trivy's cache directory `DIR`, where its vulnerability DB is (default: Trivy's, ~/.cache/trivy)")
	cli.AddAlias(fs, "cache-dir", "", "trivy-cache-dir")
}

// AddOfflineFlag adds --trivy-offline, and its old spelling --offline.
func (f *TrivyFlags) AddOfflineFlag(fs *pflag.FlagSet) {
	fs.BoolVar(&f.Offline, "trivy-offline", false, "use the vulnerability DB in --trivy-cache-dir as it is; contact nothing but the images' registries")
	cli.AddAlias(fs, "offline", "", "trivy-offline")
}

// Trivy returns the Trivy of --trivy, --trivy-cache-dir and
// --trivy-offline (false where the command has no such flag).
func (f *TrivyFlags) Trivy() (*sbom.Trivy, error) {
	return sbom.NewTrivy(sbom.WithTrivyOffline(f.Offline), sbom.WithTrivyCacheDir(f.CacheDir), sbom.WithTrivyPath(f.Path))
}
