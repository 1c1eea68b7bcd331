package watch

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Candidate is one name upstream lists, read as a version.
type Candidate struct {
	// Tag is the name as upstream lists it (a tag, a chart version, a
	// release's tag_name, a listing entry).
	Tag string
	// Version is the version read from it: pattern applied, prefix
	// stripped, as semver writes it.
	Version string
	// Prerelease is set for a semver pre-release and for a release the
	// API marks as one.
	Prerelease bool
	// Commit is the commit a git tag points at ("" for other kinds).
	Commit string
	// Digest is "sha256:<hex>" where upstream lists one for the version
	// (a Helm index entry).
	Digest string
	// AppVersion is a Helm index entry's appVersion.
	AppVersion string
	// Assets are a release's assets by name.
	Assets map[string]Asset

	semver *semver.Version
}

// Asset is a file attached to a release.
type Asset struct {
	URL    string `json:"url"`
	Digest string `json:"digest,omitempty"`
	Size   int64  `json:"size,omitempty"`
}

// policy is a VersionPolicy compiled.
type policy struct {
	re         *regexp.Regexp
	strip      []string
	constraint *semver.Constraints
	pre        bool
}

func compile(p VersionPolicy) (*policy, error) {
	c := &policy{strip: p.Strip, pre: p.Prerelease == "include"}
	if p.Pattern != "" {
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return nil, err
		}
		c.re = re
	}
	if p.Constraint != "" {
		k, err := semver.NewConstraint(p.Constraint)
		if err != nil {
			return nil, err
		}
		c.constraint = k
	}
	return c, nil
}

// parse reads name as a version, or returns nil for a name that is not one.
func (p *policy) parse(name string) *semver.Version {
	s := name
	if p.re != nil {
		m := p.re.FindStringSubmatch(name)
		if m == nil {
			return nil
		}
		switch i := p.re.SubexpIndex("version"); {
		case i > 0:
			s = m[i]
		case len(m) > 1:
			s = m[1]
		default:
			s = m[0]
		}
	}
	for _, pre := range p.strip {
		if t, ok := strings.CutPrefix(s, pre); ok {
			s = t
			break
		}
	}
	v, err := semver.NewVersion(s)
	if err != nil {
		return nil
	}
	return v
}

// version reads the current version (a recipe's) with the same policy;
// a "v" prefix is allowed, as kbuild's versions allow it.
func (p *policy) current(s string) *semver.Version {
	if v := p.parse(s); v != nil {
		return v
	}
	v, err := semver.NewVersion(s)
	if err != nil {
		return nil
	}
	return v
}

// allowed reports whether v passes the pre-release policy and the
// constraint. A pre-release allowed by the policy is checked against
// the constraint by its release version, as "~1.9" should admit 1.9.1-rc.1.
func (p *policy) allowed(v *semver.Version, markedPre bool) bool {
	pre := v.Prerelease() != "" || markedPre
	if pre && !p.pre {
		return false
	}
	if p.constraint == nil {
		return true
	}
	if pre {
		core, _ := v.SetPrerelease("")
		return p.constraint.Check(&core)
	}
	return p.constraint.Check(v)
}

// Selection is what a policy makes of the names upstream lists.
type Selection struct {
	// Allowed are the versions the policy allows, newest first.
	Allowed []Candidate
	// NotVersions counts the names that are not versions.
	NotVersions int
	// Refused counts the versions the constraint or pre-release policy
	// refuses.
	Refused int
}

// Newest returns the newest allowed candidate, or false.
func (s Selection) Newest() (Candidate, bool) {
	if len(s.Allowed) == 0 {
		return Candidate{}, false
	}
	return s.Allowed[0], true
}

// Find returns the allowed candidate of version v.
func (s Selection) Find(v string) (Candidate, bool) {
	for _, c := range s.Allowed {
		if c.Version == v {
			return c, true
		}
	}
	return Candidate{}, false
}

// selectVersions reads every listed candidate as a version and keeps those
// p allows, newest first; of two names of one version (v1.2.0 and 1.2.0)
// the first listed is kept.
func (p *policy) selectVersions(listed []Candidate) Selection {
	var s Selection
	seen := map[string]bool{}
	for _, c := range listed {
		v := p.parse(c.Tag)
		if v == nil {
			s.NotVersions++
			continue
		}
		if !p.allowed(v, c.Prerelease) {
			s.Refused++
			continue
		}
		c.semver = v
		c.Version = v.String()
		c.Prerelease = c.Prerelease || v.Prerelease() != ""
		if seen[c.Version] {
			continue
		}
		seen[c.Version] = true
		s.Allowed = append(s.Allowed, c)
	}
	sort.SliceStable(s.Allowed, func(i, j int) bool { return s.Allowed[i].semver.GreaterThan(s.Allowed[j].semver) })
	return s
}

// Expand fills a template's placeholders: {version}, {tag}, {major},
// {minor}, {patch} from c and {appVersion} from appVersion.
func Expand(template string, c Candidate, appVersion string) string {
	v, _ := semver.NewVersion(c.Version)
	return placeholderRe.ReplaceAllStringFunc(template, func(m string) string {
		switch m[1 : len(m)-1] {
		case "version":
			return c.Version
		case "tag":
			return c.Tag
		case "appVersion":
			return appVersion
		case "major":
			if v != nil {
				return strconv.FormatUint(v.Major(), 10)
			}
		case "minor":
			if v != nil {
				return strconv.FormatUint(v.Minor(), 10)
			}
		case "patch":
			if v != nil {
				return strconv.FormatUint(v.Patch(), 10)
			}
		}
		return m
	})
}
