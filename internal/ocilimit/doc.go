// Package ocilimit caps what a registry may send as a manifest before
// go-containerregistry reads it.
//
// go-containerregistry reads a manifest, an image index or a referrers
// list whole into memory, up to 100 MB, before it checks a byte: an
// endless manifest holds that much per request. Transport wraps an
// http.RoundTripper so that the responses to manifest and referrers
// requests are refused when they announce more than MaxManifest bytes, and
// fail once more than that has arrived, with an error wrapping
// ErrTooLarge that names the URL. The OCI distribution specification asks
// registries to accept manifests of at least 4 MiB; real ones are a few
// KiB.
package ocilimit
