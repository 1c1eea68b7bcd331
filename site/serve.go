package site

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"kbuild.dev/kbuild/internal/ociserve"
)

// Server serves a site directory at / and an OCI image layout as a
// read-only registry at /v2/ (kbuild serve), so that helm, crane and
// kubepkg can pull what was built without pushing it anywhere.
type Server struct {
	// Site is the site directory served at /; "" serves none.
	Site string
	// Layout is the OCI image layout served at /v2/; "" serves none.
	Layout string
}

// Serves names what s serves, for a log line: "SITE/", "LAYOUT" or
// "SITE/ and LAYOUT"; "" when it serves nothing.
func (s *Server) Serves() string {
	var served []string
	if s.Site != "" {
		served = append(served, strings.TrimSuffix(s.Site, "/")+"/")
	}
	if s.Layout != "" {
		served = append(served, s.Layout)
	}
	return strings.Join(served, " and ")
}

// Handler returns the handler of s: the distribution API (/v2 and below)
// goes to the layout, every other path to the site; what s does not
// serve answers 404. It is not an http.ServeMux, which would clean ".."
// out of paths with a redirect before the site handler could refuse them.
func (s *Server) Handler() (http.Handler, error) {
	var files, registry http.Handler = http.NotFoundHandler(), http.NotFoundHandler()
	var err error
	if s.Site != "" {
		if files, err = NewHandler(s.Site); err != nil {
			return nil, err
		}
	}
	if s.Layout != "" {
		if registry, err = ociserve.New(s.Layout); err != nil {
			return nil, err
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2" || strings.HasPrefix(r.URL.Path, "/v2/") {
			registry.ServeHTTP(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}), nil
}

// Serve serves h on ln until ctx is done, then shuts down, giving
// requests in flight 5 seconds.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan error, 1)
	stop := context.AfterFunc(ctx, func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- srv.Shutdown(shutdown)
	})
	defer stop()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	if err := <-stopped; err != nil {
		return fmt.Errorf("serve: stopping: %w", err)
	}
	return nil
}
