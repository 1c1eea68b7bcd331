// Package draft writes the first recipe of a package from its upstream
// release: a chart of a Helm repository or OCI registry, or plain
// manifest files. It pins every source by content, renders the charts to
// learn the CRDs they ship and the images they run, resolves each image
// to its digest, writes recipe.yaml and checks it with the full
// validation before it returns. It is what kbuild init runs.
package draft
