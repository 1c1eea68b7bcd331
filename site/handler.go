package site

import (
	"fmt"
	"net/http"
	"os"
	"path"
	"strings"
)

// contentTypes maps file extensions to the Content-Type the handler sends,
// fixed here rather than read from the system's mime.types so that every
// machine serves the same. Anything else is application/octet-stream.
var contentTypes = map[string]string{
	".css":  "text/css; charset=utf-8",
	".gz":   "application/gzip",
	".html": "text/html; charset=utf-8",
	".ico":  "image/x-icon",
	".js":   "text/javascript; charset=utf-8",
	".json": "application/json",
	".md":   "text/markdown; charset=utf-8",
	".pem":  "text/plain; charset=utf-8",
	".png":  "image/png",
	".pub":  "text/plain; charset=utf-8",
	".sig":  "text/plain; charset=utf-8",
	".svg":  "image/svg+xml",
	".tgz":  "application/gzip",
	".txt":  "text/plain; charset=utf-8",
	".xml":  "application/xml",
	".yaml": "application/yaml; charset=utf-8",
	".yml":  "application/yaml; charset=utf-8",
}

// fileHandler serves the files of a site directory.
type fileHandler struct {
	dir string
}

var _ http.Handler = (*fileHandler)(nil)

// NewHandler returns an http.Handler that serves the static site in dir
// the way GitHub Pages does: a directory answers with its index.html, a
// directory path without a trailing slash is redirected (relatively, so the
// handler works behind http.StripPrefix), and nothing is listed. Only GET
// and HEAD are allowed; a path with a ".." element is refused with 400, and
// no path or symlink can reach outside dir. Each request opens dir afresh,
// so a site rewritten while serving is seen.
func NewHandler(dir string) (http.Handler, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("site %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("site %s: not a directory", dir)
	}
	return &fileHandler{dir: dir}, nil
}

// ServeHTTP serves one file.
func (h *fileHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: the site is read-only", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			http.Error(w, "bad request: a path with .. is refused", http.StatusBadRequest)
			return
		}
	}
	root, err := os.OpenRoot(h.dir)
	if err != nil {
		http.Error(w, "site directory is unavailable", http.StatusInternalServerError)
		return
	}
	defer root.Close()

	name := strings.TrimPrefix(path.Clean(p), "/")
	if name == "" {
		name = "."
	}
	fi, err := root.Stat(name)
	if err != nil {
		// Absent, or outside the root through a symlink: both are 404.
		http.NotFound(w, r)
		return
	}
	if fi.IsDir() {
		if !strings.HasSuffix(p, "/") {
			target := path.Base(p) + "/"
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			w.Header().Set("Location", target)
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		name = path.Join(name, "index.html")
	}
	f, err := root.Open(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	ct, ok := contentTypes[path.Ext(name)]
	if !ok {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", fi.ModTime(), f)
}
