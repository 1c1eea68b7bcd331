// Package trivytest makes what end-to-end tests of the real Trivy need: a
// small container image whose Alpine package database lists package
// versions with known vulnerabilities, pushed to a registry, and a small
// Trivy vulnerability database (written with Trivy's own trivy-db library)
// that knows exactly those vulnerabilities, so that Trivy runs offline and
// its findings are known in advance. It is for tests only, like
// net/http/httptest.
package trivytest

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/aquasecurity/trivy-db/pkg/db"
	"github.com/aquasecurity/trivy-db/pkg/metadata"
	dbtypes "github.com/aquasecurity/trivy-db/pkg/types"
	"github.com/aquasecurity/trivy-db/pkg/vulnsrc/bucket"
	"github.com/aquasecurity/trivy-db/pkg/vulnsrc/vulnerability"
	bolt "go.etcd.io/bbolt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// AlpineVersion is the Alpine release the image claims to be.
const AlpineVersion = "3.22.2"

// alpineStream is the advisory stream Trivy looks up for AlpineVersion.
const alpineStream = "3.22"

// Package is an Alpine package installed in the image.
type Package struct {
	Name, Version, Origin string
}

// Packages are the image's installed packages.
var Packages = []Package{
	{Name: "busybox", Version: "1.37.0-r18", Origin: "busybox"},
	{Name: "libcrypto3", Version: "3.5.1-r0", Origin: "openssl"},
	{Name: "musl", Version: "1.2.5-r10", Origin: "musl"},
}

// Advisory is a vulnerability the test database records for a source
// package (an apk origin) of AlpineVersion.
type Advisory struct {
	ID       string
	Origin   string
	Fixed    string
	Severity dbtypes.Severity
}

// Advisories are what the test database knows. They are made up for the
// tests: the image has two CRITICAL vulnerabilities in libcrypto3 (origin
// openssl), one HIGH in busybox and none in musl (fixed before the
// installed version).
var Advisories = []Advisory{
	{ID: "CVE-2026-90001", Origin: "openssl", Fixed: "3.5.4-r0", Severity: dbtypes.SeverityCritical},
	{ID: "CVE-2026-90002", Origin: "openssl", Fixed: "3.5.4-r0", Severity: dbtypes.SeverityCritical},
	{ID: "CVE-2026-90003", Origin: "busybox", Fixed: "1.37.0-r20", Severity: dbtypes.SeverityHigh},
	{ID: "CVE-2026-90004", Origin: "musl", Fixed: "1.2.5-r9", Severity: dbtypes.SeverityMedium},
}

// DBUpdatedAt is the UpdatedAt of the test database's metadata.
var DBUpdatedAt = time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)

// files returns the image's only layer, as a tar.
func files() ([]byte, error) {
	var installed bytes.Buffer
	for _, p := range Packages {
		fmt.Fprintf(&installed, "P:%s\nV:%s\nA:x86_64\no:%s\nL:MIT\nT:%s for kbuild tests\n\n", p.Name, p.Version, p.Origin, p.Name)
	}
	entries := []struct {
		name string
		body string
	}{
		{"etc/", ""},
		{"etc/alpine-release", AlpineVersion + "\n"},
		{"etc/os-release", "NAME=\"Alpine Linux\"\nID=alpine\nVERSION_ID=" + AlpineVersion + "\nPRETTY_NAME=\"Alpine Linux v" + alpineStream + "\"\n"},
		{"lib/", ""},
		{"lib/apk/", ""},
		{"lib/apk/db/", ""},
		{"lib/apk/db/installed", installed.String()},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := time.Unix(0, 0)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, ModTime: mtime, Typeflag: tar.TypeReg, Size: int64(len(e.body)), Format: tar.FormatPAX}
		if e.name[len(e.name)-1] == '/' {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Image returns the test image: one layer holding /etc/alpine-release,
// /etc/os-release and /lib/apk/db/installed listing Packages.
func Image() (v1.Image, error) {
	layerTar, err := files()
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: "amd64",
		OS:           "linux",
		Created:      v1.Time{Time: time.Unix(0, 0).UTC()},
		Config:       v1.Config{Cmd: []string{"/bin/sh"}},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: time.Unix(0, 0).UTC()}, CreatedBy: "kbuild trivytest"},
	})
}

// PushImage pushes the test image to registry (host:port on loopback) as
// <registry>/kbuild-test/<repo>:1.0 and returns its reference pinned by
// digest, registry/kbuild-test/<repo>:1.0@sha256:<hex>.
func PushImage(t testing.TB, registry, repo string) string {
	t.Helper()
	img, err := Image()
	if err != nil {
		t.Fatal(err)
	}
	tag := fmt.Sprintf("%s/kbuild-test/%s:1.0", registry, repo)
	ref, err := name.ParseReference(tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", tag, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return tag + "@" + d.String()
}

// WriteDB writes a Trivy vulnerability database holding Advisories into
// cacheDir/db (trivy.db and metadata.json, schema version 2, next update a
// year ahead), the layout `trivy --cache-dir cacheDir` reads.
func WriteDB(t testing.TB, cacheDir string) {
	t.Helper()
	dir := filepath.Join(cacheDir, "db")
	if err := db.Init(dir); err != nil {
		t.Fatalf("creating the trivy DB: %v", err)
	}
	dbc := db.Config{}
	platform := bucket.NewAlpine(alpineStream).Name()
	err := dbc.BatchUpdate(func(tx *bolt.Tx) error {
		if err := dbc.PutDataSource(tx, platform, dbtypes.DataSource{ID: vulnerability.Alpine, Name: "Alpine Secdb (kbuild test)", URL: "https://secdb.alpinelinux.org/"}); err != nil {
			return err
		}
		for _, a := range Advisories {
			if err := dbc.PutAdvisoryDetail(tx, a.ID, a.Origin, []string{platform}, dbtypes.Advisory{FixedVersion: a.Fixed}); err != nil {
				return err
			}
			if err := dbc.SaveAdvisoryDetails(tx, a.ID); err != nil {
				return err
			}
			if err := dbc.PutVulnerabilityID(tx, a.ID); err != nil {
				return err
			}
			if err := dbc.PutVulnerability(tx, a.ID, dbtypes.Vulnerability{
				Title: "made-up vulnerability in " + a.Origin + " for kbuild tests",
				//lint:ignore SA1019 Trivy still reads the deprecated Severity when no vendor severity matches; the fixture sets both, as trivy-db does.
				Severity:       a.Severity.String(),
				VendorSeverity: dbtypes.VendorSeverity{vulnerability.Alpine: a.Severity},
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		t.Fatalf("writing the trivy DB: %v", err)
	}
	if err := dbc.DeleteAdvisoryDetailBucket(); err != nil {
		db.Close()
		t.Fatalf("writing the trivy DB: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	meta := metadata.Metadata{
		Version:      db.SchemaVersion,
		NextUpdate:   time.Now().Add(365 * 24 * time.Hour).UTC(),
		UpdatedAt:    DBUpdatedAt,
		DownloadedAt: DBUpdatedAt,
	}
	if err := metadata.NewClient(dir).Update(meta); err != nil {
		t.Fatalf("writing the trivy DB metadata: %v", err)
	}
}
