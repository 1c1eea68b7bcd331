package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"kbuild.dev/kbuild/site"
)

func newServeCmd() *Command {
	var (
		flags *pflag.FlagSet
		srv   site.Server
		addr  string
	)
	return &Command{
		Use:     "serve [--site DIR] [--layout DIR] [--addr HOST:PORT]",
		Summary: "Serve the published site and the local OCI layout over HTTP.",
		Help: `Serves the static site (the catalog, index.yaml and its signatures) at / and
the OCI image layout of a local build as a read-only OCI registry at /v2/,
so that helm, crane, skopeo and kubepkg can pull what was built without
pushing it anywhere. Charts built without --registry record
oci://127.0.0.1:8080/<package> as their repository: the default address.

A repository is named by the part of the layout's
org.opencontainers.image.ref.name annotation before the last ':', the tag
by the part after it: kubevirt/kubevirt-operator:1.9.0-4 is served as
oci://127.0.0.1:8080/kubevirt/kubevirt-operator with tag 1.9.0-4. The
registry speaks plain HTTP: pass --plain-http to helm (--insecure to crane).
Pushes are refused with 405; files outside --site are never served.

A default directory that does not exist is skipped with a warning; one
named with --site or --layout must exist. Stop with Ctrl-C.

Examples:
  # serve _site/ and dist/oci on 127.0.0.1:8080
  kbuild serve

  # pull a chart built into the local layout, by tag
  kbuild serve & helm pull oci://127.0.0.1:8080/kubevirt/kubevirt-operator --version 1.9.0-4 --plain-http

  # pull it by manifest digest
  helm pull oci://127.0.0.1:8080/kubevirt/kubevirt-operator@sha256:HEX --plain-http

  # list what the layout serves
  curl -s http://127.0.0.1:8080/v2/_catalog

  # preview a published site only, on another port
  kbuild serve --site public --layout '' --addr 127.0.0.1:9000`,
		Flags: func(fs *pflag.FlagSet) {
			flags = fs
			fs.StringVar(&srv.Site, "site", "_site", "site directory `DIR` to serve at / (\"\" serves none)")
			fs.StringVar(&srv.Layout, "layout", "dist/oci", "OCI image layout `DIR` to serve read-only at /v2/ (\"\" serves none)")
			fs.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
		},
		Run: func(ctx context.Context, env *Env, args []string) error {
			if len(args) > 0 {
				return usagef("serve takes no arguments, got %q", strings.Join(args, " "))
			}
			var err error
			if srv.Site, err = serveDir(env, flags, "site", srv.Site); err != nil {
				return err
			}
			if srv.Layout, err = serveDir(env, flags, "layout", srv.Layout); err != nil {
				return err
			}
			if srv.Serves() == "" {
				return fmt.Errorf("serve: nothing to serve: no site directory and no OCI layout; build with `kbuild build` first, or name them with --site and --layout")
			}
			h, err := srv.Handler()
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: %w; is another server on %s? pass --addr", err, addr)
			}
			fmt.Fprintf(env.Stderr, "serving %s on http://%s\n", srv.Serves(), ln.Addr())
			return site.Serve(ctx, ln, h)
		},
	}
}

// serveDir returns the directory flag of fs names, or "" when it names
// none or names the default and that does not exist (with a warning).
func serveDir(env *Env, fs *pflag.FlagSet, flag, dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) && !fs.Changed(flag) {
			fmt.Fprintf(env.Stderr, "warning: %s does not exist; not serving it (pass --%s to choose another)\n", dir, flag)
			return "", nil
		}
		return "", fmt.Errorf("serve --%s %s: %w", flag, dir, err)
	}
	return dir, nil
}
