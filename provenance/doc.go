// Package provenance writes and checks the SLSA v1 build provenance of a
// published build: an in-toto statement whose subjects are every chart
// archive and OCI manifest, signed as a DSSE envelope with the index key
// (Sign) and checked against a chart's digest (Verify). Package evidence
// beside it carries the signed test evidence in the same envelope.
package provenance
