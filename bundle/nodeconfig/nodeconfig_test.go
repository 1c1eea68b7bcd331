package nodeconfig

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"sigs.k8s.io/yaml"
)

// containerdHosts is hosts.toml as containerd reads it
// (remotes/docker/config: server, and host tables with capabilities, ca,
// client, skip_verify, header, override_path, dial_timeout).
type containerdHosts struct {
	Server string `toml:"server"`
	Host   map[string]struct {
		Capabilities []string       `toml:"capabilities"`
		CA           any            `toml:"ca"`
		Client       any            `toml:"client"`
		SkipVerify   *bool          `toml:"skip_verify"`
		Header       map[string]any `toml:"header"`
		OverridePath bool           `toml:"override_path"`
		DialTimeout  *string        `toml:"dial_timeout"`
	} `toml:"host"`
}

func TestWrite(t *testing.T) {
	cases := []struct {
		name       string
		mirror     Mirror
		registries []string
		// want is, per registry, the manifest URL containerd requests for
		// repository r/x at digest d.
		want map[string]string
	}{
		{"https with a path", Mirror{Host: "mirror.local:5000", Path: "airgap"}, []string{"registry.k8s.io", "quay.io", "quay.io"}, map[string]string{
			"quay.io":         "https://mirror.local:5000/v2/airgap/quay.io/r/x/manifests/d",
			"registry.k8s.io": "https://mirror.local:5000/v2/airgap/registry.k8s.io/r/x/manifests/d",
		}},
		{"plain http at the root, a registry with a port", Mirror{Host: "127.0.0.1:5000", PlainHTTP: true}, []string{"127.0.0.1:6000", "docker.io"}, map[string]string{
			"127.0.0.1:6000": "http://127.0.0.1:5000/v2/127.0.0.1_6000/r/x/manifests/d",
			"docker.io":      "http://127.0.0.1:5000/v2/docker.io/r/x/manifests/d",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			paths, err := Write(dir, tc.mirror, tc.registries)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.IsSorted(paths) || len(paths) != len(tc.want)+2 {
				t.Errorf("Write wrote %v, want %d sorted files", paths, len(tc.want)+2)
			}
			for reg, want := range tc.want {
				var h containerdHosts
				md, err := toml.DecodeFile(filepath.Join(dir, filepath.FromSlash(ContainerdHosts(reg))), &h)
				if err != nil {
					t.Fatal(err)
				}
				if u := md.Undecoded(); len(u) > 0 {
					t.Errorf("%s: keys containerd does not know: %v", reg, u)
				}
				if len(h.Host) != 1 || !strings.HasPrefix(h.Server, "https://") {
					t.Fatalf("%s: %+v", reg, h)
				}
				for host, c := range h.Host {
					if !c.OverridePath || !slices.Equal(c.Capabilities, []string{"pull", "resolve"}) {
						t.Errorf("%s: host %s = %+v, want pull and resolve with override_path", reg, host, c)
					}
					u, err := url.Parse(host)
					if err != nil {
						t.Fatal(err)
					}
					// override_path: the host's path is the API root.
					got := u.Scheme + "://" + u.Host + u.Path + "/r/x/manifests/d"
					if got != want {
						t.Errorf("%s: containerd would request %s, want %s", reg, got, want)
					}
				}
			}

			var crio struct {
				Registry []struct {
					Prefix, Location string
					Mirror           []struct {
						Location       string
						Insecure       bool
						PullFromMirror string `toml:"pull-from-mirror"`
					}
				}
			}
			md, err := toml.DecodeFile(filepath.Join(dir, filepath.FromSlash(CRIODropIn)), &crio)
			if err != nil || len(md.Undecoded()) > 0 {
				t.Fatalf("CRI-O drop-in: %v, unknown keys %v", err, md.Undecoded())
			}
			for _, r := range crio.Registry {
				m := r.Mirror[0]
				if want := tc.mirror.Host + "/" + tc.mirror.Prefix(r.Prefix); m.Location != want || m.PullFromMirror != "digest-only" || m.Insecure != tc.mirror.PlainHTTP {
					t.Errorf("CRI-O %s mirror = %+v, want %s digest-only", r.Prefix, m, want)
				}
			}
			if len(crio.Registry) != len(tc.want) {
				t.Errorf("CRI-O has %d registries, want %d", len(crio.Registry), len(tc.want))
			}

			b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(TalosPatch)))
			var talos struct {
				Machine struct {
					Registries struct {
						Mirrors map[string]struct {
							Endpoints    []string `json:"endpoints"`
							OverridePath bool     `json:"overridePath"`
							SkipFallback bool     `json:"skipFallback"`
						} `json:"mirrors"`
					} `json:"registries"`
				} `json:"machine"`
			}
			if err := yaml.UnmarshalStrict(b, &talos); err != nil {
				t.Fatalf("Talos patch: %v\n%s", err, b)
			}
			for reg := range tc.want {
				m := talos.Machine.Registries.Mirrors[reg]
				if len(m.Endpoints) != 1 || m.Endpoints[0] != tc.mirror.Endpoint(reg) || !m.OverridePath || !m.SkipFallback {
					t.Errorf("Talos mirror %s = %+v", reg, m)
				}
			}
		})
	}
}

func TestRenderRefusesBadRegistry(t *testing.T) {
	for _, r := range []string{"", "../etc", "a/b", ".."} {
		if _, err := Render(Mirror{Host: "m"}, []string{r}); err == nil {
			t.Errorf("Render accepted registry %q", r)
		}
	}
}
