// Package dist reads and writes the build output directory: one build
// record (kind PackageSource) per build, dist/<name>-<version>-<build>.yaml,
// with its BuildInfo sidecar, dist/<name>-<version>-<build>.build.yaml, and
// the delegated signatures 'kbuild trust sign' adds,
// dist/<name>-<version>-<build>.sig.yaml.
//
// One walk finds the records (dir/oci, hidden directories and sidecars
// skipped) and one parser reads them, index.ParseRecord, the one
// index.Builder uses: Read returns the records with their BuildInfo, Add
// reads them into an index.Builder in parallel, AddRecords only the files
// named.
package dist
