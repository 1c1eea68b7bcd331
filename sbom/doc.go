// Package sbom describes what kbuild published as CycloneDX 1.6 JSON and
// scans the container images it runs with Trivy.
//
// # Bills of materials
//
// ForRepository makes one BOM for a set of builds (a whole repository or a
// chosen part of it) and ForBuild one for a single build. A BOM lists:
//
//   - each package build (type application): version, build number as the
//     property kbuild:build, spec digest as its SHA-256 hash, the BuildInfo
//     provenance (recipe, recipe digest, commit, builder) as properties;
//   - each chart it installs (type application), identified by its purl
//     pkg:oci/<name>@sha256:<archive digest>?repository_url=…&tag=…, with
//     the archive digest as hash and the OCI manifest digest, when the
//     BuildInfo knows it, as the property kbuild:chart:manifest;
//   - each image it runs (type container), identified by its purl
//     pkg:oci/<name>@sha256:<manifest digest>?repository_url=…&tag=…, with
//     the manifest digest as hash, optionally with the image's own contents
//     (OS and language packages, as Trivy lists them) nested under it;
//   - each upstream source of each build from its BuildInfo (types file,
//     data or container), with its SHA-256 and an external reference to
//     where it was fetched, so the BOM shows where every byte came from.
//
// A chart's bom-ref is chart:<name>-<16 hex of its purl's SHA-256> and an
// image's image:<name>-<…>, the same for the same purl in every BOM; the
// purl is in the component's purl field. (Until 2026-12 the bom-ref was
// the purl itself, which a version's BOM then carried three times.)
//
// dependencies link the repository (metadata.component) to its packages and
// each package to its charts, images, sources and the packages it requires
// (variants[].requires) that are part of the same BOM.
//
// # Reproducibility
//
// BOMs are written as compact JSON (Marshal). The same inputs give the same bytes: components, properties, hashes and
// dependencies are sorted; bom-refs are derived from names, versions and
// digests, never random; metadata.timestamp is the time the caller passes
// (SOURCE_DATE_EPOCH or the index's generated time) and absent otherwise;
// the serial number is a name-based UUID (version 5, see SerialNamespace)
// over the sorted spec digests of the packages. Trivy's random serial
// number, timestamp and UUID bom-refs are replaced when its output is
// nested.
//
// # Vulnerability scans
//
// Scan runs a VulnScanner (Trivy as a program, see NewTrivy) once per
// distinct image pinned by digest and returns a Report: counts per
// severity for each image and package, the images that could not be
// scanned because they are not pinned, and the vulnerability database the
// scan used.
package sbom
