package bundle

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteText writes what the bundle holds for a person: when it was made,
// the bundled index and who signed it, then every package, chart and
// image with what pins it (kbuild bundle inspect).
func (in *Inspection) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "created: %s\nindex: %s (generated %s", in.Created.Format(time.RFC3339), in.Index, in.Generated)
	if in.Expires != "" {
		fmt.Fprintf(w, ", expires %s", in.Expires)
	}
	fmt.Fprintf(w, ")\n")
	for _, s := range in.SignedBy {
		switch {
		case s.Checked:
			fmt.Fprintf(w, "index signed by %s (%s, carried in the bundle; import checks the signature against your keys)\n", s.KeyID, s.KeyFile)
		case s.KeyID != "":
			fmt.Fprintf(w, "index signed by %s, as index.yaml.sig says (the bundle carries no such key; import checks it against your keys)\n", s.KeyID)
		default:
			fmt.Fprintf(w, "index signed by a key the bundle does not carry (index.yaml.sig names no keyid); import checks it against your keys\n")
		}
	}
	fmt.Fprintf(w, "cosign signatures and attestations of the charts: %d\n", in.Sigstore)
	fmt.Fprintf(w, "%d blobs, %s\n\npackages:\n", in.Blobs, HumanBytes(in.Bytes))
	for _, p := range in.Packages {
		fmt.Fprintf(w, "  %s %s build %d  %s  (%s)\n", p.Name, p.Version, p.Build, p.Digest, p.Reason)
	}
	fmt.Fprintf(w, "charts:\n")
	for _, c := range in.Charts {
		fmt.Fprintf(w, "  oci://%s  archive %s  pinned by %s\n", c.Ref, c.Digest, pinnedBy(c.PinnedBy))
	}
	fmt.Fprintf(w, "images:\n")
	for _, im := range in.Images {
		extra := ""
		if len(im.Platforms) > 0 {
			extra = " platforms " + strings.Join(im.Platforms, ",")
		}
		fmt.Fprintf(w, "  %s  %s%s  pinned by %s\n", im.Ref, HumanBytes(im.Size), extra, pinnedBy(im.PinnedBy))
	}
	return nil
}

func pinnedBy(who []string) string {
	if len(who) == 0 {
		return "NOTHING in the bundled index (import will refuse it)"
	}
	return strings.Join(who, ", ")
}

// HumanBytes writes n bytes in B, KiB, MiB or GiB, one decimal above B.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// WriteNotes writes what Import checked and did, for the log: the index's
// warnings, the charts and images pushed to mirror, the site and the node
// settings written.
func (r *Imported) WriteNotes(w io.Writer, mirror, site string) error {
	for _, warn := range r.Verified.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintf(w, "verified and pushed %d charts and %d images to %s; wrote %s\n", len(r.Locations.Charts), len(r.Locations.Images), mirror, site)
	for _, p := range r.NodeConfig {
		fmt.Fprintf(w, "wrote %s\n", p)
	}
	return nil
}

// WriteText writes what a subscriber of the imported site does next: the
// index to subscribe to and with which keys, where charts and images are,
// how cosign and Flux verify them, and where the node settings are.
func (r *Imported) WriteText(w io.Writer, mirror, site string) error {
	site = strings.TrimSuffix(site, "/")
	fmt.Fprintf(w, "index: %s/index.yaml (signed upstream; subscribe with the same keys)\n", site)
	fmt.Fprintf(w, "charts and images: %s\n", mirror)
	if r.Resigned {
		fmt.Fprintf(w, "index with charts at the mirror: %s/%s/index.yaml (signed by the import's key): subscribe to this one, with that key's public key\n", site, ResignDir)
	} else {
		fmt.Fprintf(w, "subscribe to %s/index.yaml with the upstream keys: its charts still point at the upstream registry, so clusters need node settings (the import writes them when asked) to pull them from %s, or import with a signing key to write %s/%s/index.yaml, an index whose charts point at the mirror\n",
			site, mirror, site, ResignDir)
	}
	fmt.Fprintf(w, "cosign and Flux verify the mirrored charts with the upstream public key (cosign verify --key index.pub --insecure-ignore-tlog=true %s/...@sha256:...)\n", strings.TrimPrefix(mirror, "oci://"))
	if r.NodeConfigDir != "" {
		fmt.Fprintf(w, "node settings: %s (containerd certs.d, Talos patch, CRI-O drop-in)\n", r.NodeConfigDir)
	}
	return nil
}

// WriteJSON writes the inspection as indented JSON.
func (in *Inspection) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
