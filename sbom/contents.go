package sbom

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"sync"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// addImageContents asks the ImageContents for every pinned image, a few at
// once, and nests what it lists under the image's component, in image
// order.
func (a *assembly) addImageContents(ctx context.Context) error {
	var refs []string
	for ref, c := range a.comps {
		if c.Type == cdx.ComponentTypeContainer && c.Hashes != nil && !isSource(ref) {
			refs = append(refs, ref)
		}
	}
	sort.Strings(refs)
	subs := make([]*cdx.BOM, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, ref := range refs {
		img, err := imageRefOf(a.comps[ref])
		if err != nil {
			return err
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			subs[i], errs[i] = a.cfg.contents.ImageBOM(ctx, img)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("listing the contents of image %s: %w", img, errs[i])
			}
		}()
	}
	wg.Wait()
	for i, ref := range refs {
		if errs[i] != nil {
			return errs[i]
		}
		img := a.comps[ref]
		deps, tools, err := nestContents(img, subs[i])
		if err != nil {
			return fmt.Errorf("listing the contents of image %s: %w", img.Name, err)
		}
		for _, d := range deps {
			a.depend(d.Ref)
			if d.Dependencies != nil {
				a.depend(d.Ref, *d.Dependencies...)
			}
		}
		a.tools = append(a.tools, tools...)
	}
	return nil
}

func isSource(ref string) bool { return len(ref) > 7 && ref[:7] == "source:" }

// imageRefOf returns the pinned reference an image component was made
// from.
func imageRefOf(c *cdx.Component) (string, error) {
	if c.Hashes == nil || len(*c.Hashes) == 0 {
		return "", fmt.Errorf("image %s is not pinned by digest", c.Name)
	}
	r := c.Name
	if c.Version != "" {
		r += ":" + c.Version
	}
	return r + "@sha256:" + (*c.Hashes)[0].Value, nil
}

// randomRef matches bom-refs that are random UUIDs, as Trivy gives
// components without a purl.
var randomRef = regexp.MustCompile(`^(?i)(urn:uuid:)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// nestContents moves the components of sub (a BOM of the image's contents)
// under img, renaming every bom-ref to "<image bom-ref>/<stable name>" so
// that refs are unique across images and free of Trivy's random UUIDs. It
// returns sub's dependencies in the new names (the image's own ref taking
// the place of sub's metadata.component) and the tools sub names. sub's
// serial number and timestamp are dropped.
func nestContents(img *cdx.Component, sub *cdx.BOM) ([]cdx.Dependency, []cdx.Component, error) {
	if sub == nil {
		return nil, nil, fmt.Errorf("no BOM")
	}
	rename := map[string]string{}
	var tools []cdx.Component
	if md := sub.Metadata; md != nil {
		if md.Component != nil {
			if md.Component.BOMRef != "" {
				rename[md.Component.BOMRef] = img.BOMRef
			}
			mergeProperties(img, md.Component.Properties)
		}
		if md.Tools != nil && md.Tools.Components != nil {
			for _, t := range *md.Tools.Components {
				tools = append(tools, cdx.Component{Type: cdx.ComponentTypeApplication, Group: t.Group, Name: t.Name, Version: t.Version})
			}
		}
	}
	var comps []cdx.Component
	if sub.Components != nil {
		comps = append(comps, *sub.Components...)
	}
	used := map[string]bool{img.BOMRef: true}
	if err := renameComponents(comps, img.BOMRef+"/", rename, used); err != nil {
		return nil, nil, err
	}
	sortComponents(comps)
	if len(comps) > 0 {
		img.Components = &comps
	}

	var deps []cdx.Dependency
	if sub.Dependencies != nil {
		for _, d := range *sub.Dependencies {
			ref, ok := rename[d.Ref]
			if !ok {
				continue // a dangling ref in the tool's output: nothing to link
			}
			nd := cdx.Dependency{Ref: ref}
			list := []string{}
			if d.Dependencies != nil {
				for _, t := range *d.Dependencies {
					if nt, ok := rename[t]; ok && nt != ref {
						list = append(list, nt)
					}
				}
			}
			sort.Strings(list)
			nd.Dependencies = &list
			deps = append(deps, nd)
		}
	}
	return deps, tools, nil
}

// renameComponents gives each component of cs (recursively) a bom-ref
// prefix+name: its own ref when that is not random, else its purl, else
// type:name@version; a name already taken gets "#2", "#3", …. Components
// are taken in a content order, so the names do not depend on the order
// or the random refs of the input.
func renameComponents(cs []cdx.Component, prefix string, rename map[string]string, used map[string]bool) error {
	keys := make([]string, len(cs))
	for i := range cs {
		k, err := contentKey(cs[i])
		if err != nil {
			return err
		}
		keys[i] = k
	}
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return keys[idx[i]] < keys[idx[j]] })
	for _, i := range idx {
		c := &cs[i]
		name := c.BOMRef
		if name == "" || randomRef.MatchString(name) {
			name = c.PackageURL
		}
		if name == "" {
			name = string(c.Type) + ":" + c.Name
			if c.Version != "" {
				name += "@" + c.Version
			}
		}
		ref := prefix + name
		for n := 2; used[ref]; n++ {
			ref = prefix + name + "#" + strconv.Itoa(n)
		}
		used[ref] = true
		if c.BOMRef != "" {
			rename[c.BOMRef] = ref
		}
		c.BOMRef = ref
		if c.Properties != nil {
			ps := append([]cdx.Property(nil), *c.Properties...)
			sortProperties(ps)
			c.Properties = &ps
		}
		if c.Components != nil {
			nested := append([]cdx.Component(nil), *c.Components...)
			if err := renameComponents(nested, prefix, rename, used); err != nil {
				return err
			}
			c.Components = &nested
		}
	}
	return nil
}

// contentKey is a component's JSON with random bom-refs left out, for
// ordering components independently of their input order.
func contentKey(c cdx.Component) (string, error) {
	c.Components = nil
	if randomRef.MatchString(c.BOMRef) {
		c.BOMRef = ""
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encoding component %s: %w", c.Name, err)
	}
	return string(b), nil
}

// mergeProperties adds ps to c's properties, keeping them sorted and
// without exact duplicates.
func mergeProperties(c *cdx.Component, ps *[]cdx.Property) {
	if ps == nil || len(*ps) == 0 {
		return
	}
	var all []cdx.Property
	if c.Properties != nil {
		all = append(all, *c.Properties...)
	}
	seen := map[cdx.Property]bool{}
	for _, p := range all {
		seen[p] = true
	}
	for _, p := range *ps {
		if !seen[p] {
			seen[p] = true
			all = append(all, p)
		}
	}
	sortProperties(all)
	c.Properties = &all
}
