package site

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/sitelayout"
	"kbuild.dev/kbuild/spec"
)

// The types below are what the templates see: strings ready to print,
// built from the index in one place so the templates hold no logic.

// page is what every page shares.
type page struct {
	// Title is the page's title; Repository the repository's.
	Title, Repository string
	// Root is the relative path from the page to the site root: "" or "../".
	Root      string
	Generated stamp
	Expires   stamp
	// Links are the repository-wide files linked in the footer.
	Links []link
	// Suite names the suite whose catalog the page is part of (WithSuites),
	// SuiteHref links that catalog's package list and AllSuitesHref the
	// site root's page of suites, when there is one.
	Suite, SuiteHref, AllSuitesHref string
	// Banner, when set, is shown instead of the index's expiry (pages that
	// are not one index's, as the compatibility matrices).
	Banner string
}

// stamp is an absolute UTC time; ISO is empty for the zero time.
type stamp struct {
	ISO, Text string
}

type link struct {
	Href, Text string
}

type indexPage struct {
	page
	Packages []packageRow
	Snippet  snippet
	// Compat links the compatibility matrices.
	Compat []link
}

type packageRow struct {
	Name, Href, Description string
	Latest                  string
	Build                   int
	Versions                int
	Provides, Requires      []string
	CRDs                    []string
	Rollback                rollback
}

type rollback struct {
	Class, Text string
}

// snippet is a YAML block of kubepkg objects. SiteURL is printed before
// Rest; it is a placeholder (Placeholder true) that search.js replaces with
// the URL of RelIndex resolved against the page when no base URL is known.
type snippet struct {
	Before      string
	SiteURL     string
	Placeholder bool
	RelIndex    string
	After       string
	// CmdBefore and CmdAfter are the kubepkg repo add command around
	// SiteURL, when there is one.
	CmdBefore, CmdAfter string
	// Keys are the key files the command names, linked.
	Keys []link
}

type packagePage struct {
	page
	Name, Description, Home string
	// HomeLink is whether Home is an http(s) URL to link; any other
	// scheme is shown as text only.
	HomeLink bool
	Versions []versionView
	// Withdrawn are the package's withdrawn versions, with the reason.
	Withdrawn []withdrawnView
	// Detailed is how many versions are shown in full; Older whether
	// there are more.
	Detailed int
	Older    bool
	// HasSuites is whether the repository has suites (WithSuites).
	HasSuites bool
	// Referrers is whether every version's SBOM and provenance are OCI
	// referrers of its charts (WithReferrers).
	Referrers bool
	// Compat links the compatibility matrices of the package and of the
	// release sets it is a member of.
	Compat []link
	// IsSet is whether the newest version is a release set.
	IsSet bool
}

// MaxDetailed is how many of a package's versions, newest first, its page
// shows in full; the others are rows of its versions table. A page then
// stays a few tens of KB however many versions a package has.
const MaxDetailed = 10

type withdrawnView struct {
	Version      string
	Build        int
	Digest       string
	Reason, Date string
	Suites       []suiteBadge
}

type versionView struct {
	// Detailed is whether the version is shown in full.
	Detailed    bool
	ID, Version string
	Build       int
	Digest      string
	Newest      bool
	// Suites are the suites that hold this build, or withdrew it
	// (WithSuites).
	Suites      []suiteBadge
	Rollback    rollback
	Provides    []string
	Conflicts   []string
	CRDs        []string
	Permissions *permissionsView
	Variants    []variantView
	Images      []imageView
	Files       []link
	// Discover are the oras commands that list the version's SBOM and
	// provenance in the registry, when the site does not hold them
	// (WithReferrers).
	Discover []string
	Snippet  snippet
	// Set is the release set this version is, with its members.
	Set *setView
}

// setView is a release set: the exact builds it pins, each with its
// images, and its set digest when the index lists the set whole.
type setView struct {
	Digest  string
	Members []memberView
	// CompatHref links the set's compatibility matrix, when it has one.
	CompatHref string
}

type memberView struct {
	Package, Version, Href string
	Build                  int
	// Digest is the member's spec digest; Missing says the index does not
	// hold the build.
	Digest  string
	Missing bool
	Images  []imageView
}

type permissionsView struct {
	ClusterWide bool
	Rules       []string
}

type variantView struct {
	Name       string
	DependsOn  []string
	Requires   []string
	Libraries  []string
	Components []componentView
}

type componentView struct {
	Name, Release, Namespace string
	Privileged               bool
	DependsOn                []string
	Path                     string // a recipe chart key, when no chart is pinned
	Chart                    *chartView
}

type chartView struct {
	TagRef          string // oci://<repository>/<name>:<tag>
	ArchiveDigest   string
	DigestRef       string // oci://<repository>/<name>@<manifest digest>, when known
	Install         string
	InstallByDigest string
	// Verify is the cosign verify line of the chart pinned by digest,
	// for the keyless identity (WithKeyless), when both are known.
	Verify       string
	Flux, ArgoCD string // GitOps objects pinned by manifest digest, when known
	// Follow is how a Flux, Argo CD or Helm cluster follows this
	// catalog's suite (WithSuites): a version range over the suite's
	// followable repository.
	Follow *followView
}

type followView struct {
	Suite, Repo, Helm, Flux, ArgoCD string
}

type imageView struct {
	Name, Digest string
}

const (
	timeFormat      = "2006-01-02 15:04 UTC"
	placeholderBase = "SITE_URL"
)

func newStamp(t time.Time) stamp {
	if t.IsZero() {
		return stamp{}
	}
	t = t.UTC()
	return stamp{ISO: t.Format(time.RFC3339), Text: t.Format(timeFormat)}
}

func newPage(idx *index.RepositoryIndex, o *options, title, root string) page {
	p := page{
		Title:      title,
		Repository: o.title,
		Root:       root,
		Generated:  newStamp(idx.Generated),
		Expires:    newStamp(idx.Expires),
		Links:      []link{{Href: root + sitelayout.IndexFile, Text: sitelayout.IndexFile}},
	}
	for _, f := range []string{sitelayout.SignatureFile, sitelayout.RootFile, sitelayout.ScanFile} {
		if o.published[f] {
			p.Links = append(p.Links, link{Href: root + f, Text: f})
		}
	}
	for _, k := range keyFiles(o) {
		p.Links = append(p.Links, link{Href: root + k, Text: k})
	}
	if s := o.suites; s != nil && s.This != "" {
		p.Suite, p.SuiteHref = s.This, root+"index.html"
		if s.List {
			p.AllSuitesHref = root + "../index.html"
		}
	}
	return p
}

func newIndexPage(idx *index.RepositoryIndex, o *options) indexPage {
	ip := indexPage{page: newPage(idx, o, o.title, ""), Snippet: repositorySnippet(o, ""), Compat: compatList(o)}
	for _, name := range sortedNames(idx) {
		pkg := idx.Packages[name]
		row := packageRow{
			Name:        name,
			Href:        "packages/" + name + ".html",
			Description: pkg.Description,
			Versions:    len(pkg.Versions),
		}
		if n, ok := o.counts[name]; ok {
			row.Versions = n
		}
		if len(pkg.Versions) > 0 {
			v := pkg.Versions[0]
			row.Latest, row.Build = v.Version, v.Build
			row.Provides = v.Spec.Provides
			row.Requires = requirements(v.Spec.Variants)
			row.CRDs = v.Spec.CRDs
			row.Rollback = newRollback(v.Spec.Rollback)
		}
		ip.Packages = append(ip.Packages, row)
	}
	return ip
}

func newPackagePage(idx *index.RepositoryIndex, name string, o *options) packagePage {
	pkg := idx.Packages[name]
	pp := packagePage{
		page:        newPage(idx, o, name+" · "+o.title, "../"),
		Name:        name,
		Description: pkg.Description,
		Home:        pkg.Home,
		HomeLink:    strings.HasPrefix(pkg.Home, "https://") || strings.HasPrefix(pkg.Home, "http://"),
		HasSuites:   o.suites != nil,
		Referrers:   o.referrers,
		Compat:      compatLinks(idx, name, o, "../"),
	}
	for i, v := range pkg.Versions {
		vv := versionView{ID: fmt.Sprintf("v%s-%d", v.Version, v.Build), Version: v.Version, Build: v.Build, Digest: v.Digest, Rollback: newRollback(v.Spec.Rollback)}
		if i < MaxDetailed {
			vv = newVersionView(name, v, i == 0, o)
			vv.Detailed = true
			vv.Set = newSetView(idx, name, v, o)
			pp.Detailed = i + 1
			if i == 0 {
				pp.IsSet = vv.Set != nil
			}
		}
		vv.Suites = o.badges(name, v.Version, v.Build, v.Digest, true, false)
		pp.Versions = append(pp.Versions, vv)
	}
	pp.Older = len(pkg.Versions) > MaxDetailed
	for _, w := range idx.Withdrawn {
		if w.Package == name {
			pp.Withdrawn = append(pp.Withdrawn, withdrawnView{Version: w.Version, Build: w.Build, Digest: w.Digest, Reason: w.Reason, Date: w.Withdrawn.Format("2006-01-02"),
				Suites: o.badges(name, w.Version, w.Build, w.Digest, false, true)})
		}
	}
	return pp
}

// newSetView returns the members of v when it is a release set, each
// linked to its version on its own page, with its images; nil otherwise.
func newSetView(idx *index.RepositoryIndex, name string, v index.IndexVersion, o *options) *setView {
	members, isSet, err := index.SetMembers(&v.Spec)
	if !isSet || err != nil {
		return nil
	}
	sv := &setView{}
	for _, sd := range idx.Sets {
		if sd.Package == name && sd.Version == v.Version && sd.Build == v.Build {
			sv.Digest = sd.Digest
		}
	}
	if href, ok := o.compatHref(name, "../"); ok {
		sv.CompatHref = href + fmt.Sprintf("#v%s-%d", v.Version, v.Build)
	}
	for _, m := range members {
		mv := memberView{Package: m.Package, Version: m.Version, Build: m.Build, Href: m.Package + ".html"}
		e := idx.Find(m.Package, m.Version, m.Build)
		if e == nil {
			mv.Missing = true
		} else {
			mv.Version, mv.Digest = e.Version, e.Digest
			mv.Href += fmt.Sprintf("#v%s-%d", e.Version, e.Build)
			for _, img := range e.Spec.Images {
				ref, dgst, _ := strings.Cut(img, "@")
				mv.Images = append(mv.Images, imageView{Name: ref, Digest: dgst})
			}
		}
		if idx.Packages[m.Package] == nil {
			mv.Href = ""
		}
		sv.Members = append(sv.Members, mv)
	}
	return sv
}

func newVersionView(name string, v index.IndexVersion, newest bool, o *options) versionView {
	s := v.Spec
	vv := versionView{
		ID:        fmt.Sprintf("v%s-%d", v.Version, v.Build),
		Version:   v.Version,
		Build:     v.Build,
		Digest:    v.Digest,
		Newest:    newest,
		Rollback:  newRollback(s.Rollback),
		Provides:  s.Provides,
		Conflicts: s.Conflicts,
		CRDs:      s.CRDs,
		Snippet:   packageSnippet(o, name, v.Version),
	}
	if p := s.Permissions; p != nil {
		pv := &permissionsView{ClusterWide: p.ClusterWide}
		for _, r := range p.Rules {
			pv.Rules = append(pv.Rules, ruleText(r))
		}
		vv.Permissions = pv
	}
	for _, va := range s.Variants {
		vv.Variants = append(vv.Variants, newVariantView(name, va, o))
	}
	for _, img := range s.Images {
		ref, dgst, _ := strings.Cut(img, "@")
		vv.Images = append(vv.Images, imageView{Name: ref, Digest: dgst})
	}
	key := fmt.Sprintf("%s-%s-%d", name, v.Version, v.Build)
	for _, f := range []struct{ path, text string }{
		{"sbom/" + key + ".cdx.json", "SBOM (CycloneDX)"},
		{"provenance/" + key + ".intoto.json", "Provenance (in-toto)"},
		{sitelayout.ScanFile, "Vulnerability scan"},
	} {
		if o.published[f.path] {
			vv.Files = append(vv.Files, link{Href: "../" + f.path, Text: f.text})
		}
	}
	if o.referrers && !o.published["sbom/"+key+".cdx.json"] {
		for _, va := range vv.Variants {
			for _, c := range va.Components {
				if c.Chart == nil {
					continue
				}
				ref := c.Chart.DigestRef
				if ref == "" {
					ref = c.Chart.TagRef
				}
				vv.Discover = append(vv.Discover, "oras discover "+shellQuote(strings.TrimPrefix(ref, "oci://")))
			}
		}
	}
	return vv
}

func newVariantView(pkg string, va spec.Variant, o *options) variantView {
	vv := variantView{Name: va.Name, DependsOn: va.DependsOn, Requires: requirements([]spec.Variant{va})}
	for _, l := range va.Libraries {
		vv.Libraries = append(vv.Libraries, l.Name)
	}
	for _, c := range va.Components {
		cv := componentView{Name: c.Name, Release: c.Name, Path: c.Path}
		if in := c.Install; in != nil {
			if in.ReleaseName != "" {
				cv.Release = in.ReleaseName
			}
			cv.Namespace, cv.Privileged, cv.DependsOn = in.Namespace, in.Privileged, in.DependsOn
		}
		if c.Chart != nil {
			cv.Chart = newChartView(pkg, c.Chart, cv.Release, cv.Namespace, o)
		}
		vv.Components = append(vv.Components, cv)
	}
	return vv
}

// newChartView builds the references of a pinned chart of package pkg.
// The OCI tag is the chart version with '+' replaced by '_', as helm push
// does; helm's --version takes the chart version itself.
func newChartView(pkg string, c *spec.ChartRef, release, namespace string, o *options) *chartView {
	repo := strings.TrimSuffix(c.Repository, "/") + "/" + c.Name
	cv := &chartView{
		TagRef:        repo + ":" + strings.ReplaceAll(c.Version, "+", "_"),
		ArchiveDigest: c.Digest,
	}
	ns := ""
	if namespace != "" {
		ns = " --namespace " + shellQuote(namespace) + " --create-namespace"
	}
	cv.Install = "helm install " + shellQuote(release) + " " + shellQuote(repo) + " --version " + shellQuote(c.Version) + ns
	g := gitOps{object: objectName(pkg, release), repo: repo, release: release, namespace: namespace, keySecret: yamlName(o.title) + "-cosign", issuer: o.keyless[0], subject: o.keyless[1], repository: o.keyless[2]}
	if m := o.manifests[c.Digest]; m != "" {
		cv.DigestRef = repo + "@" + m
		cv.InstallByDigest = "helm install " + shellQuote(release) + " " + shellQuote(cv.DigestRef) + ns
		if g.subject != "" {
			cv.Verify = cosignVerifyKeyless(g, strings.TrimPrefix(cv.DigestRef, "oci://"))
		}
		g.digest = m
		cv.Flux = fluxSnippet(g)
		cv.ArgoCD = argoCDSnippet(g)
	}
	if o.suites != nil && o.suites.This != "" && strings.HasPrefix(c.Repository, "oci://") {
		f := &followView{Suite: o.suites.This, Repo: FollowRepository(c.Repository, o.suites.This, c.Name)}
		g.repo, g.digest, g.semver = f.Repo, "", FollowRange
		f.Helm = "helm upgrade --install " + shellQuote(release) + " " + shellQuote(f.Repo) + " --version " + shellQuote(FollowRange) + ns
		f.Flux = fluxSnippet(g)
		f.ArgoCD = argoCDSnippet(g)
		cv.Follow = f
	}
	return cv
}

// shellSafe matches words a POSIX shell passes through unchanged.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it, so a pasted
// command passes recipe strings as single arguments.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// requirements lists what variants require (dependsOn packages included,
// as kubepkg reads them), one entry per package or capability and
// constraint, sorted.
func requirements(variants []spec.Variant) []string {
	seen := map[string]bool{}
	var out []string
	for _, va := range variants {
		for _, r := range va.Requirements() {
			s := r.Package
			if s == "" {
				s = r.Capability
			}
			if r.Version != "" {
				s += " " + r.Version
			}
			if r.Optional {
				s += " (optional)"
			}
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

func ruleText(r spec.PolicyRule) string {
	var parts []string
	if len(r.Verbs) > 0 {
		parts = append(parts, strings.Join(r.Verbs, ","))
	}
	var what []string
	for _, res := range r.Resources {
		for _, g := range orCore(r.APIGroups) {
			what = append(what, g+res)
		}
	}
	what = append(what, r.NonResourceURLs...)
	if len(what) > 0 {
		parts = append(parts, "on "+strings.Join(what, ", "))
	}
	if len(r.ResourceNames) > 0 {
		parts = append(parts, "named "+strings.Join(r.ResourceNames, ", "))
	}
	return strings.Join(parts, " ")
}

// orCore turns API groups into resource prefixes: "" (the core group) is
// no prefix, "apps" is "apps/".
func orCore(groups []string) []string {
	if len(groups) == 0 {
		return []string{""}
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		if g != "" {
			out[i] = g + "/"
		}
	}
	return out
}

func newRollback(r *spec.Rollback) rollback {
	switch {
	case r == nil:
		return rollback{Class: "unknown", Text: "not declared"}
	case r.Safe:
		return rollback{Class: "safe", Text: "safe"}
	default:
		return rollback{Class: "unsafe", Text: "unsafe"}
	}
}

func siteURL(o *options) (string, bool) {
	if o.baseURL != "" {
		return o.baseURL, false
	}
	return placeholderBase, true
}

// yamlName turns a title into a DNS-1123 name for the Repository object.
func yamlName(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimSuffix(b.String(), "-")
	if len(s) > 63 {
		s = strings.TrimSuffix(s[:63], "-")
	}
	if s == "" {
		s = "packages"
	}
	return s
}
