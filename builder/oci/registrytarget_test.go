package oci

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart"
)

// staticKeychain gives the same credentials for every registry.
type staticKeychain struct{ user, pass string }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return authn.FromConfig(authn.AuthConfig{Username: k.user, Password: k.pass}), nil
}

// authRegistry is an in-process registry behind anonymous, basic or bearer
// auth that counts its pings (GET /v2/).
type authRegistry struct {
	scheme string // "", "basic" or "bearer"
	reg    http.Handler
	mu     sync.Mutex
	pings  int
	heads  int // HEADs of a manifest that reached the registry
	tokens int
	url    string
}

func (a *authRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	if r.Method == http.MethodGet && r.URL.Path == "/v2/" {
		a.pings++
	}
	a.mu.Unlock()
	switch {
	case r.URL.Path == "/token":
		a.mu.Lock()
		a.tokens++
		a.mu.Unlock()
		if r.Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte("u:p")) {
			http.Error(w, "bad credentials", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"token": "t0k3n"}`)
		return
	case a.scheme == "basic" && r.Header.Get("Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte("u:p")):
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	case a.scheme == "bearer" && r.Header.Get("Authorization") != "Bearer t0k3n":
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="test"`, a.url))
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/manifests/") {
		a.mu.Lock()
		a.heads++ // one that passed the auth check
		a.mu.Unlock()
	}
	a.reg.ServeHTTP(w, r)
}

// TestRegistryTargetAuth pushes three charts and looks each up again
// through a RegistryTarget, against a registry without auth, with basic
// auth and with bearer tokens: every push and lookup works, and a registry
// that wants no bearer token is pinged twice in all instead of before
// every request, nor asked again for the tag it was just asked for.
func TestRegistryTargetAuth(t *testing.T) {
	for _, tc := range []struct {
		scheme          string
		maxPings, heads int
	}{
		{"", 2, 6},
		{"basic", 2, 6},
		{"bearer", 10, 9}, // one ping to learn the scheme, then one per lookup and push (3 charts × 3), as go-containerregistry does; remote.Write looks at the tag again
	} {
		t.Run(cmp.Or(tc.scheme, "anonymous"), func(t *testing.T) {
			a := &authRegistry{scheme: tc.scheme, reg: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
			srv := httptest.NewServer(a)
			defer srv.Close()
			a.url = srv.URL
			target, err := NewRegistryTarget("oci://"+strings.TrimPrefix(srv.URL, "http://")+"/pkgs", true, WithKeychain(staticKeychain{"u", "p"}))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for i := range 3 {
				repo := fmt.Sprintf("p%d/c%d", i, i)
				name := fmt.Sprintf("c%d", i)
				img, err := ChartImage(testArchive(t, name), &chart.Metadata{APIVersion: "v2", Name: name, Version: "1.0.0-1"}, time.Unix(0, 0))
				if err != nil {
					t.Fatal(err)
				}
				want, _ := img.Digest()
				if _, ok, err := target.Lookup(ctx, repo, "1.0.0-1"); err != nil || ok {
					t.Fatalf("Lookup before the push = %v, %v; want not found", ok, err)
				}
				if err := target.Push(ctx, repo, "1.0.0-1", img); err != nil {
					t.Fatalf("Push: %v", err)
				}
				got, ok, err := target.Lookup(ctx, repo, "1.0.0-1")
				if err != nil || !ok || got != want {
					t.Fatalf("Lookup after the push = %s, %v, %v; want %s", got, ok, err, want)
				}
			}
			t.Logf("%d pings, %d manifest HEADs, %d tokens", a.pings, a.heads, a.tokens)
			if a.heads != tc.heads {
				t.Errorf("%d HEAD requests for manifests, want %d (two lookups per chart, and remote.Write's own with a bearer registry)", a.heads, tc.heads)
			}
			if a.pings > tc.maxPings {
				t.Errorf("registry pinged %d times, want at most %d", a.pings, tc.maxPings)
			}
			if tc.scheme == "bearer" && a.tokens == 0 {
				t.Errorf("no token was fetched from the bearer registry")
			}
		})
	}
}

// TestLookup5xx: a registry that answers every manifest HEAD with 503 is
// asked lookupAttempts times, and the error says it retried and what to do.
func TestLookup5xx(t *testing.T) {
	var heads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			return
		}
		heads.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	tg, err := NewRegistryTarget("oci://"+strings.TrimPrefix(srv.URL, "http://")+"/charts", true)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = tg.Lookup(t.Context(), "web/web", "1.0.0-1")
	if err == nil || !strings.Contains(err.Error(), "retried 2 times with backoff") || !strings.Contains(err.Error(), "run again later") {
		t.Fatalf("Lookup against a registry answering 503 = %v, want a message saying it retried and what to do", err)
	}
	if n := heads.Load(); n != lookupAttempts {
		t.Errorf("the registry was asked %d times, want %d", n, lookupAttempts)
	}
}
