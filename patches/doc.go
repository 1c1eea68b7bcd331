// Package patches turns upstream manifests and charts into the chart a recipe
// describes (the "Charts" section of the recipe spec).
//
// For plain manifests the steps are: Split the files into objects, Exclude
// the unwanted ones, Apply the recipe's patches (RFC 7386 merge, Kubernetes
// strategic merge, RFC 6902) and Wrap the result into a generated chart whose
// single template prints each manifest verbatim, so "{{ }}" in upstream text
// survives Helm's rendering. Split reads each document alone, as Helm does;
// Wrap stores every document no exclude or patch touched byte for byte as
// upstream wrote it and serializes only what a patch changed; Apply writes
// YAML anchors and aliases out before patching, so a patch changes the node
// it names and nothing else. For any chart, MergeValues merges the recipe's
// values over values.yaml, Overlay copies the recipe's overlay files over the
// chart and Remove deletes the files the recipe lists.
//
// Objects are kyaml nodes (sigs.k8s.io/kustomize/kyaml), so patching and
// merging keep the key order and comments of the parts they do not change,
// and serialization is deterministic. The package does no network I/O and
// touches the file system only in Wrap, Overlay and Remove, always inside the
// directories it is given.
package patches
