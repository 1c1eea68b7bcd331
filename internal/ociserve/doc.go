// Package ociserve serves an OCI image layout (the directory that
// go-containerregistry's layout.Path writes and skopeo and crane read) as a
// read-only OCI distribution API under /v2/, so that helm, crane, skopeo and
// kubepkg can pull the charts and images of a local build as if they were in
// a registry.
//
// # Repository names and tags
//
// The layout's index.json lists top-level descriptors. A descriptor whose
// annotation org.opencontainers.image.ref.name is "<name>:<tag>" (split at
// the last ':', as the builder writes it, for example
// "kubevirt/kubevirt-operator:1.9.0-4") is served as tag <tag> of repository
// <name>. A ref name without a ':' (a bare tag, as skopeo writes it), with a
// name that is not a valid distribution repository name (for example one
// that keeps a registry host with a port) or with an invalid tag is not
// served by tag. When one name:tag appears more than once, the last entry
// in index.json wins, as a later push would.
//
// A repository serves, by digest, every manifest and blob reachable from
// its tagged descriptors: image indexes, their child manifests, and each
// manifest's config and layers. A top-level manifest that names a subject
// (an attestation or signature, which the builder stores without a ref
// name) belongs to every repository that serves its subject, and is listed
// by the referrers API. Anything else in the layout is 404 to it.
//
// # API
//
//	GET      /v2/                               200 {}
//	GET|HEAD /v2/<name>/manifests/<tag|digest>  the manifest, Content-Type its media type
//	GET|HEAD /v2/<name>/blobs/<digest>          the blob (Range requests honoured)
//	GET      /v2/<name>/tags/list[?n=&last=]    {"name":…,"tags":[…]} sorted
//	GET      /v2/<name>/referrers/<digest>      an image index of the manifests naming it
//	                                            as subject (?artifactType= filters)
//	GET      /v2/_catalog[?n=&last=]            {"repositories":[…]} sorted
//
// Every response carries Docker-Distribution-API-Version: registry/2.0.
// Unknown names, tags, digests and routes answer 404 with an OCI error body
// ({"errors":[{"code":…,"message":…}]}); malformed names and digests 400;
// every method other than GET and HEAD 405 (the API is read-only).
//
// The layout is re-read when its index.json changes, so a server left
// running sees new builds.
package ociserve
