package sources

import (
	"fmt"
	"io"
	"os"

	dockerconfig "github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/configfile"
	dockertypes "github.com/docker/cli/cli/config/types"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// ConfigKeychain returns the registry credentials of the Docker config
// file at path (the auths and credential helpers it names), as kubepkg's
// --registry-config reads it: a registry the file does not name is
// anonymous. At most 1 MiB of the file is read.
func ConfigKeychain(path string) (authn.Keychain, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	cf, err := dockerconfig.LoadFromReader(io.LimitReader(fh, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fileKeychain{cf}, nil
}

// fileKeychain resolves credentials from one Docker config file.
type fileKeychain struct{ cf *configfile.ConfigFile }

func (k fileKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	host := r.RegistryStr()
	if host == name.DefaultRegistry {
		host = authn.DefaultAuthKey
	}
	ac, err := k.cf.GetAuthConfig(host)
	if err != nil {
		return nil, err
	}
	if ac == (dockertypes.AuthConfig{ServerAddress: ac.ServerAddress}) {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(authn.AuthConfig{Username: ac.Username, Password: ac.Password, Auth: ac.Auth,
		IdentityToken: ac.IdentityToken, RegistryToken: ac.RegistryToken}), nil
}
