package qualify

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// releaseRecords is Helm's Secrets storage driver (what the helm CLI and
// kubepkg's operator keep releases in) with one difference: the records
// it writes are compressed at gzip.BestSpeed by a pooled writer. Helm's
// own driver compresses every record at BestCompression with a fresh
// writer, about 1 MiB of compressor state each (54 records per
// qualification of the Foreman stack). The records are otherwise what
// Helm writes: a Secret of type helm.sh/release.v1 named by the key, the
// same labels, data "release" holding base64(gzip(JSON of the release)),
// read back by Helm's own driver (Get, List, Query, Delete are its own)
// and by the helm and helm4 CLIs (TestReleaseRecordsHelmReads).
type releaseRecords struct {
	*driver.Secrets
	secrets corev1client.SecretInterface
}

var _ driver.Driver = (*releaseRecords)(nil)

func newReleaseRecords(secrets corev1client.SecretInterface, log func(string, ...any)) *releaseRecords {
	d := driver.NewSecrets(secrets)
	d.Log = log
	return &releaseRecords{Secrets: d, secrets: secrets}
}

// Create stores the release as a new Secret, labelled createdAt as
// Helm's driver does; driver.ErrReleaseExists if it exists.
func (r *releaseRecords) Create(key string, rls *release.Release) error {
	obj, err := recordSecret(key, rls, "createdAt")
	if err != nil {
		return fmt.Errorf("create: failed to encode release %q: %w", rls.Name, err)
	}
	if _, err := r.secrets.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return driver.ErrReleaseExists
		}
		return fmt.Errorf("create: failed to create: %w", err)
	}
	return nil
}

// Update replaces the release's Secret, labelled modifiedAt (and, as
// with Helm's driver, no longer createdAt).
func (r *releaseRecords) Update(key string, rls *release.Release) error {
	obj, err := recordSecret(key, rls, "modifiedAt")
	if err != nil {
		return fmt.Errorf("update: failed to encode release %q: %w", rls.Name, err)
	}
	if _, err := r.secrets.Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update: failed to update: %w", err)
	}
	return nil
}

// recordSecret is Helm's newSecretsObject: the release's own labels, the
// time label, then name, owner, status and version.
func recordSecret(key string, rls *release.Release, timeLabel string) (*corev1.Secret, error) {
	data, err := encodeFitting(rls, corev1.MaxSecretSize-len("release"))
	if err != nil {
		return nil, err
	}
	labels := make(map[string]string, len(rls.Labels)+5)
	for k, v := range rls.Labels {
		labels[k] = v
	}
	labels[timeLabel] = strconv.FormatInt(time.Now().Unix(), 10)
	labels["name"] = rls.Name
	labels["owner"] = "helm"
	labels["status"] = rls.Info.Status.String()
	labels["version"] = strconv.Itoa(rls.Version)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key, Labels: labels},
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{"release": data},
	}, nil
}

// encodeFitting encodes rls at BestSpeed, or at Helm's BestCompression
// when that would be over limit bytes: a record the API server would
// refuse at BestSpeed may fit at Helm's level, and kbuild must not refuse
// what helm would store.
func encodeFitting(rls *release.Release, limit int) ([]byte, error) {
	data, err := encodeRecord(rls, gzip.BestSpeed)
	if err != nil || len(data) <= limit {
		return data, err
	}
	return encodeRecord(rls, gzip.BestCompression)
}

// gzipWriters holds a compressor per level in use; a flate compressor is
// about 1 MiB of state whatever the level.
var gzipWriters = map[int]*sync.Pool{
	gzip.BestSpeed:       {New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed); return w }},
	gzip.BestCompression: {New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestCompression); return w }},
}

// encodeRecord is base64(gzip(JSON of rls)), what Helm's driver decodes.
func encodeRecord(rls *release.Release, level int) ([]byte, error) {
	b, err := json.Marshal(rls)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(b) / 4)
	pool := gzipWriters[level]
	w := pool.Get().(*gzip.Writer)
	w.Reset(&buf)
	_, err = w.Write(b)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	pool.Put(w)
	if err != nil {
		return nil, err
	}
	out := make([]byte, base64.StdEncoding.EncodedLen(buf.Len()))
	base64.StdEncoding.Encode(out, buf.Bytes())
	return out, nil
}
