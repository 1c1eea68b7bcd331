// Package nodeconfig writes the settings that make Kubernetes nodes pull
// images of upstream registries from a mirror that holds them under
// PATH/<registry>/<repository>: containerd certs.d hosts.toml files, a
// Talos machine-config patch and a CRI-O registries.conf.d drop-in.
package nodeconfig

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/internal/atomicfile"
)

// Mirror is where the images are.
type Mirror struct {
	// Host is the mirror registry, host[:port].
	Host string
	// Path is the repository path under which <registry>/<repository>
	// live ("" for the root).
	Path string
	// PlainHTTP makes nodes talk HTTP to the mirror.
	PlainHTTP bool
}

// Prefix returns the mirror repository prefix for registry:
// PATH/<registry> with ':' written '_'.
func (m Mirror) Prefix(registry string) string {
	p := strings.ReplaceAll(registry, ":", "_")
	if path := strings.Trim(m.Path, "/"); path != "" {
		p = path + "/" + p
	}
	return p
}

func (m Mirror) scheme() string {
	if m.PlainHTTP {
		return "http"
	}
	return "https"
}

// Endpoint is the URL containerd and Talos use with override_path: the
// mirror's API root for registry's repositories.
func (m Mirror) Endpoint(registry string) string {
	return m.scheme() + "://" + m.Host + "/v2/" + m.Prefix(registry)
}

// Files are the paths, relative to the output directory, and contents of
// the node settings.
const (
	TalosPatch = "talos/registry-mirrors.patch.yaml"
	CRIODropIn = "crio/registries.conf.d/50-kbuild-mirror.conf"
)

// ContainerdHosts returns the path of registry's hosts.toml.
func ContainerdHosts(registry string) string { return "containerd/certs.d/" + registry + "/hosts.toml" }

// HostsFile is containerd's hosts.toml.
type HostsFile struct {
	Server string          `toml:"server"`
	Host   map[string]Host `toml:"host"`
}

// Host is one [host."URL"] table of hosts.toml.
type Host struct {
	Capabilities []string `toml:"capabilities"`
	OverridePath bool     `toml:"override_path"`
}

// CRIOFile is a containers-registries.conf(5) v2 drop-in.
type CRIOFile struct {
	Registry []CRIORegistry `toml:"registry"`
}

// CRIORegistry is one [[registry]] table.
type CRIORegistry struct {
	Prefix   string       `toml:"prefix"`
	Location string       `toml:"location"`
	Mirror   []CRIOMirror `toml:"mirror"`
}

// CRIOMirror is one [[registry.mirror]] table.
type CRIOMirror struct {
	Location       string `toml:"location"`
	Insecure       bool   `toml:"insecure,omitempty"`
	PullFromMirror string `toml:"pull-from-mirror"`
}

// Render returns every file for the upstream registries, by path.
// containerd gets one certs.d/<registry>/hosts.toml per registry, pulling
// and resolving from the mirror with override_path; Talos a
// machine.registries.mirrors patch with overridePath and skipFallback;
// CRI-O one [[registry]] per registry whose mirror serves digests only
// (pinned images are pulled by digest).
func Render(m Mirror, registries []string) (map[string][]byte, error) {
	regs := slices.Sorted(slices.Values(registries))
	regs = slices.Compact(regs)
	out := map[string][]byte{}
	type talosMirror struct {
		Endpoints    []string `json:"endpoints"`
		OverridePath bool     `json:"overridePath"`
		SkipFallback bool     `json:"skipFallback"`
	}
	talos := map[string]talosMirror{}
	var crio CRIOFile
	for _, r := range regs {
		if r == "" || strings.ContainsAny(r, "/\\ ") || r == "." || r == ".." {
			return nil, fmt.Errorf("registry %q is not a host[:port]", r)
		}
		server := "https://" + r
		if r == "docker.io" {
			server = "https://registry-1.docker.io"
		}
		var buf bytes.Buffer
		hf := HostsFile{Server: server, Host: map[string]Host{m.Endpoint(r): {Capabilities: []string{"pull", "resolve"}, OverridePath: true}}}
		if err := toml.NewEncoder(&buf).Encode(hf); err != nil {
			return nil, err
		}
		out[ContainerdHosts(r)] = append([]byte("# Written by kbuild bundle import: pull "+r+" images from the mirror.\n"), buf.Bytes()...)
		talos[r] = talosMirror{Endpoints: []string{m.Endpoint(r)}, OverridePath: true, SkipFallback: true}
		crio.Registry = append(crio.Registry, CRIORegistry{Prefix: r, Location: r, Mirror: []CRIOMirror{{
			Location: m.Host + "/" + m.Prefix(r), Insecure: m.PlainHTTP, PullFromMirror: "digest-only"}}})
	}
	tp, err := yaml.Marshal(map[string]any{"machine": map[string]any{"registries": map[string]any{"mirrors": talos}}})
	if err != nil {
		return nil, err
	}
	out[TalosPatch] = append([]byte("# Written by kbuild bundle import: apply with talosctl patch machineconfig --patch @"+filepath.Base(TalosPatch)+"\n"), tp...)
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(crio); err != nil {
		return nil, err
	}
	out[CRIODropIn] = append([]byte("# Written by kbuild bundle import: copy to /etc/containers/registries.conf.d/.\n"), buf.Bytes()...)
	return out, nil
}

// Write renders the files and writes them under dir, each atomically, and
// returns their paths, sorted.
func Write(dir string, m Mirror, registries []string) ([]string, error) {
	files, err := Render(m, registries)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(p, files[rel], 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
