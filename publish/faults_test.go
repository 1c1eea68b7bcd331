package publish

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/oci"
	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sitelayout"
)

// fault is what the proxy does to the requests it matches, times times.
type fault struct {
	name   string
	match  func(*http.Request) bool
	times  int
	status int         // answer this status instead of forwarding
	header http.Header // with these headers
	reset  bool        // read a little of the request, then reset the connection
	stall  bool        // hold the request until the client gives up
	// stallAfter, when not 0, reads that many bytes of the request body
	// (-1: all of it) and then holds the request until the client gives
	// up: an upload stalled half-way, or one taken and never answered.
	stallAfter int64
	ack500     bool // forward, then answer 500 whatever the registry said
}

// faultProxy is a loopback HTTP proxy in front of the real registry that
// injects faults into the requests its rules match.
type faultProxy struct {
	srv    *httptest.Server
	proxy  *httputil.ReverseProxy
	mu     sync.Mutex
	faults []*fault
	hits   int
	// stalled is when the first request that a stall held arrived.
	stalled time.Time
}

func newFaultProxy(t *testing.T, registry string) *faultProxy {
	t.Helper()
	u, err := url.Parse("http://" + registry)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{proxy: httputil.NewSingleHostReverseProxy(u)}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// host is host:port of the proxy.
func (p *faultProxy) host() string { return strings.TrimPrefix(p.srv.URL, "http://") }

func (p *faultProxy) set(f *fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults, p.hits = []*fault{f}, 0
}

// stalledAt is when the first request that a stall held arrived.
func (p *faultProxy) stalledAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stalled
}

// take returns the fault for r, if one is left.
func (p *faultProxy) take(r *http.Request) *fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.faults {
		if f.times > 0 && f.match(r) {
			f.times--
			p.hits++
			if (f.stall || f.stallAfter != 0) && p.stalled.IsZero() {
				p.stalled = time.Now()
			}
			return f
		}
	}
	return nil
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := p.take(r)
	switch {
	case f == nil:
		p.proxy.ServeHTTP(w, r)
	case f.reset:
		io.CopyN(io.Discard, r.Body, 16)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // close with RST
		}
		conn.Close()
	case f.stall:
		<-r.Context().Done()
	case f.stallAfter != 0:
		if f.stallAfter < 0 {
			io.Copy(io.Discard, r.Body)
		} else {
			io.CopyN(io.Discard, r.Body, f.stallAfter)
		}
		<-r.Context().Done()
	case f.ack500:
		rec := httptest.NewRecorder()
		p.proxy.ServeHTTP(rec, r)
		w.WriteHeader(http.StatusInternalServerError)
	default:
		for k, v := range f.header {
			w.Header()[k] = v
		}
		w.WriteHeader(f.status)
	}
}

func onRepo(repo string, methods ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if !strings.Contains(r.URL.Path, "/"+repo+"/") {
			return false
		}
		for _, m := range methods {
			if r.Method == m {
				return true
			}
		}
		return len(methods) == 0
	}
}

// stallTimeout is the registry timeout of a faulted publish that stalls,
// and stallMargin how long after it the publish may take to return.
const (
	stallTimeout = 5 * time.Second
	stallMargin  = 3 * time.Second
)

func blobPatch(repo string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/"+repo+"/blobs/uploads/")
	}
}

func manifestPut(repo string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/"+repo+"/manifests/")
	}
}

func blobUpload(repo string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return (r.Method == http.MethodPatch || r.Method == http.MethodPut) && strings.Contains(r.URL.Path, "/"+repo+"/blobs/uploads/")
	}
}

// TestPublishRegistryFaults publishes a new package through a proxy that
// injects one kind of fault each time. Publish either completes (bounded
// retries) with a verified index whose charts are all in the registry, or
// fails with a message naming the chart and leaves the index exactly as it
// was; a re-run without the fault then completes.
func TestPublishRegistryFaults(t *testing.T) {
	reg := testenv.Registry(t)
	for _, f := range []*fault{
		{name: "503 burst on pushes", match: onRepo("beta", http.MethodPut, http.MethodPost, http.MethodPatch), times: 2, status: http.StatusServiceUnavailable},
		{name: "500 burst", match: onRepo("beta"), times: 2, status: http.StatusInternalServerError},
		{name: "502 burst", match: onRepo("beta"), times: 2, status: http.StatusBadGateway},
		{name: "429 with Retry-After", match: onRepo("beta"), times: 2, status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"1"}}},
		{name: "unending 503", match: onRepo("beta"), times: 1000, status: http.StatusServiceUnavailable},
		{name: "reset mid-blob", match: blobUpload("beta"), times: 1, reset: true},
		{name: "stalled past the timeout", match: onRepo("beta", http.MethodHead, http.MethodGet), times: 1, stall: true},
		{name: "manifest PUT stored but answered 500", match: manifestPut("beta"), times: 1, ack500: true},
		{name: "blob PATCH stalled half-way", match: blobPatch("beta"), times: 1000, stallAfter: 256},
		{name: "manifest PUT never answered", match: manifestPut("beta"), times: 1000, stallAfter: -1},
	} {
		t.Run(f.name, func(t *testing.T) {
			proxy := newFaultProxy(t, reg)
			fx := newE2EFixture(t)
			fx.registry = "oci://" + proxy.host() + strings.TrimPrefix(fx.registry, "oci://"+reg)
			// Only the faulted publish of a stall waits less than the
			// default minute for the registry: the proxy holds the request
			// until the client gives up, however long that is.
			var faulted func(oci.Target) oci.Target
			stalls := f.stall || f.stallAfter != 0
			if stalls {
				faulted = func(tg oci.Target) oci.Target {
					tg.(*oci.RegistryTarget).SetTimeout(stallTimeout)
					return tg
				}
			}
			fx.recipe("alpha", "1.0.0", 1)
			if _, err := fx.publish("site", nil); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(filepath.Join(fx.work, "site", sitelayout.IndexFile))
			beforeSig, _ := os.ReadFile(filepath.Join(fx.work, "site", sitelayout.SignatureFile))

			fx.recipe("beta", "2.0.0", 1)
			proxy.set(f)
			_, err := fx.publish("site", faulted)
			if proxy.hits == 0 {
				t.Fatal("the fault never happened")
			}
			// A stalled request fails the publish within the timeout, with
			// room for the cleanup after it; it is not repeated, which
			// would wait out the timeout again (it held publish for 61 s
			// with a timeout of 5 s).
			if held := time.Since(proxy.stalledAt()); stalls && held > stallTimeout+stallMargin {
				t.Errorf("publish returned %s after the registry stalled, more than the timeout %s + %s (%d stalled requests)", held.Round(time.Millisecond), stallTimeout, stallMargin, proxy.hits)
			}
			after, _ := os.ReadFile(filepath.Join(fx.work, "site", sitelayout.IndexFile))
			if err != nil {
				msg := err.Error()
				var be *builder.BuildErrors
				if errors.As(err, &be) {
					msg = be.Failed[0].Err.Error()
				}
				if !strings.Contains(msg, "chart beta") && !strings.Contains(msg, "beta/beta") {
					t.Errorf("the failure does not name the chart: %s", msg)
				}
				afterSig, _ := os.ReadFile(filepath.Join(fx.work, "site", sitelayout.SignatureFile))
				if !bytes.Equal(after, before) || !bytes.Equal(afterSig, beforeSig) {
					t.Fatal("a failed publish changed index.yaml or its signature")
				}
				t.Logf("failed as allowed: %s", msg)
				proxy.set(&fault{match: func(*http.Request) bool { return false }})
				if _, err := fx.publish("site", nil); err != nil {
					t.Fatalf("re-run without the fault: %v", err)
				}
			} else {
				t.Logf("completed after %d injected faults", proxy.hits)
			}
			x := fx.verified("site")
			if got := versionsOf(x); len(got) != 2 {
				t.Errorf("the index holds %v, want alpha and beta", got)
			}
			fx.checkPullable(x)
		})
	}
}
