package index

import "strconv"

// specField names one field of the spec types. The constants are indexes
// into SpecFields, from which the canonical JSON encoder (specjson.go), the
// YAML reader (specread.go) and writer (yamlwrite.go) and RequiredEmpty
// take each field's name and omitempty.
type specField uint8

// Fields of the spec types, grouped by type in kubepkg's field order.
const (
	fSpecVersion specField = iota
	fSpecBuild
	fSpecSourceRef
	fSpecProvides
	fSpecConflicts
	fSpecCRDs
	fSpecPermissions
	fSpecRollback
	fSpecVariants
	fSpecImages

	fRefKind
	fRefName
	fRefNamespace
	fRefURL
	fRefPath

	fPermClusterWide
	fPermRules

	fRuleVerbs
	fRuleAPIGroups
	fRuleResources
	fRuleResourceNames
	fRuleNonResourceURLs

	fRollbackSafe

	fVariantName
	fVariantDependsOn
	fVariantRequires
	fVariantLibraries
	fVariantComponents

	fReqPackage
	fReqCapability
	fReqVersion
	fReqOptional

	fLibName
	fLibPath

	fCompName
	fCompPath
	fCompChart
	fCompInstall
	fCompLibraries
	fCompValuesFiles

	fChartRepository
	fChartName
	fChartVersion
	fChartDigest

	fInstReleaseName
	fInstNamespace
	fInstPrivileged
	fInstDependsOn
	fInstUpgradeCRDs
	fInstWaitStrategy
	fInstHealthCheckExprs
	fInstPhase
	fInstReadyWhen

	fCheckAPIVersion
	fCheckKind
	fCheckCurrent
	fCheckInProgress
	fCheckFailed

	fReadyAPIVersion
	fReadyKind
	fReadyName
	fReadyNamespace
	fReadyCondition
	fReadyStatus

	numSpecFields
)

// SpecFieldInfo is what kubepkg's API types say about one field of the
// spec.
type SpecFieldInfo struct {
	// Type is the kbuild type holding the field (PackageSpec, Variant, …).
	Type string
	// JSON is the field's JSON name.
	JSON string
	// OmitEmpty is true when kubepkg's type tags the field omitempty, so
	// encoding/json leaves it out when empty. A field without omitempty is
	// always written, as "" for a string and null for an absent list, and
	// kubepkg's CRD schema requires it (controller-gen makes every field
	// without omitempty or +optional required).
	OmitEmpty bool
}

// SpecFields is the one table of how kubepkg encodes the spec: for every
// field of kubepkg's api/v1 PackageSourceSpec and the types it holds (with
// k8s.io/api rbac/v1 PolicyRule for permission rules), its JSON name and
// whether the type tags it omitempty, in kubepkg's field order. The spec
// digest is the sha256 of encoding/json's output for those types, so one
// wrong entry here makes every kubepkg subscriber refuse the whole index.
//
// Read from kubepkg's api/v1/packagesource_types.go: the fields without
// omitempty are variant name, library path, sourceRef kind, component
// name, chart repository/name/version, healthCheckExprs
// apiVersion/kind/current, readyWhen apiVersion/kind/name/condition; and
// rbac/v1 PolicyRule verbs. The golden digest vectors
// (testdata/kubepkg-digests.yaml, TestKubepkgDigestVectors) pin the table
// against an independent mirror of kubepkg's types; TestSpecFieldsMatchTags
// checks that the struct tags of this package's types agree with it.
var SpecFields = [numSpecFields]SpecFieldInfo{
	fSpecVersion:     {"PackageSpec", "version", true},
	fSpecBuild:       {"PackageSpec", "build", true},
	fSpecSourceRef:   {"PackageSpec", "sourceRef", true},
	fSpecProvides:    {"PackageSpec", "provides", true},
	fSpecConflicts:   {"PackageSpec", "conflicts", true},
	fSpecCRDs:        {"PackageSpec", "crds", true},
	fSpecPermissions: {"PackageSpec", "permissions", true},
	fSpecRollback:    {"PackageSpec", "rollback", true},
	fSpecVariants:    {"PackageSpec", "variants", true},
	fSpecImages:      {"PackageSpec", "images", true},

	fRefKind:      {"SourceRef", "kind", false},
	fRefName:      {"SourceRef", "name", true},
	fRefNamespace: {"SourceRef", "namespace", true},
	fRefURL:       {"SourceRef", "url", true},
	fRefPath:      {"SourceRef", "path", true},

	fPermClusterWide: {"Permissions", "clusterWide", true},
	fPermRules:       {"Permissions", "rules", true},

	fRuleVerbs:           {"PolicyRule", "verbs", false},
	fRuleAPIGroups:       {"PolicyRule", "apiGroups", true},
	fRuleResources:       {"PolicyRule", "resources", true},
	fRuleResourceNames:   {"PolicyRule", "resourceNames", true},
	fRuleNonResourceURLs: {"PolicyRule", "nonResourceURLs", true},

	fRollbackSafe: {"Rollback", "safe", true},

	fVariantName:       {"Variant", "name", false},
	fVariantDependsOn:  {"Variant", "dependsOn", true},
	fVariantRequires:   {"Variant", "requires", true},
	fVariantLibraries:  {"Variant", "libraries", true},
	fVariantComponents: {"Variant", "components", true},

	fReqPackage:    {"Requirement", "package", true},
	fReqCapability: {"Requirement", "capability", true},
	fReqVersion:    {"Requirement", "version", true},
	fReqOptional:   {"Requirement", "optional", true},

	fLibName: {"Library", "name", true},
	fLibPath: {"Library", "path", false},

	fCompName:        {"Component", "name", false},
	fCompPath:        {"Component", "path", true},
	fCompChart:       {"Component", "chart", true},
	fCompInstall:     {"Component", "install", true},
	fCompLibraries:   {"Component", "libraries", true},
	fCompValuesFiles: {"Component", "valuesFiles", true},

	fChartRepository: {"ChartRef", "repository", false},
	fChartName:       {"ChartRef", "name", false},
	fChartVersion:    {"ChartRef", "version", false},
	fChartDigest:     {"ChartRef", "digest", true},

	fInstReleaseName:      {"Install", "releaseName", true},
	fInstNamespace:        {"Install", "namespace", true},
	fInstPrivileged:       {"Install", "privileged", true},
	fInstDependsOn:        {"Install", "dependsOn", true},
	fInstUpgradeCRDs:      {"Install", "upgradeCRDs", true},
	fInstWaitStrategy:     {"Install", "waitStrategy", true},
	fInstHealthCheckExprs: {"Install", "healthCheckExprs", true},
	fInstPhase:            {"Install", "phase", true},
	fInstReadyWhen:        {"Install", "readyWhen", true},

	fCheckAPIVersion: {"HealthCheck", "apiVersion", false},
	fCheckKind:       {"HealthCheck", "kind", false},
	fCheckCurrent:    {"HealthCheck", "current", false},
	fCheckInProgress: {"HealthCheck", "inProgress", true},
	fCheckFailed:     {"HealthCheck", "failed", true},

	fReadyAPIVersion: {"ReadyWhen", "apiVersion", false},
	fReadyKind:       {"ReadyWhen", "kind", false},
	fReadyName:       {"ReadyWhen", "name", false},
	fReadyNamespace:  {"ReadyWhen", "namespace", true},
	fReadyCondition:  {"ReadyWhen", "condition", false},
	fReadyStatus:     {"ReadyWhen", "status", true},
}

func (f specField) name() string    { return SpecFields[f].JSON }
func (f specField) omitEmpty() bool { return SpecFields[f].OmitEmpty }

// EmptyField is a field kubepkg's CRD schema requires that a spec leaves
// empty.
type EmptyField struct {
	// Path is the field's path below the spec, e.g.
	// "variants[0].libraries[1].path".
	Path string
	// Type and JSON name the field as in SpecFields.
	Type, JSON string
}

// RequiredEmpty lists, in field order, every field of s that kubepkg's
// types do not tag omitempty (SpecFields) and that s leaves empty: a
// string that is "" or a list with no entries. The API server refuses
// such a PackageSource, and a subscriber encodes the empty value, so
// recipes and build records must not have them. Fields of objects s does
// not have (a nil sourceRef, no chart) are not listed.
func RequiredEmpty(s *PackageSpec) []EmptyField {
	var out []EmptyField
	add := func(path string, f specField, empty bool) {
		if empty && !f.omitEmpty() {
			out = append(out, EmptyField{Path: path + f.name(), Type: SpecFields[f].Type, JSON: f.name()})
		}
	}
	if r := s.SourceRef; r != nil {
		add("sourceRef.", fRefKind, r.Kind == "")
	}
	if p := s.Permissions; p != nil {
		for i, r := range p.Rules {
			add(sprintIndex("permissions.rules", i), fRuleVerbs, len(r.Verbs) == 0)
		}
	}
	for i := range s.Variants {
		v := &s.Variants[i]
		vp := sprintIndex("variants", i)
		add(vp, fVariantName, v.Name == "")
		for j, l := range v.Libraries {
			add(vp+sprintIndex("libraries", j), fLibPath, l.Path == "")
		}
		for j := range v.Components {
			c := &v.Components[j]
			cp := vp + sprintIndex("components", j)
			add(cp, fCompName, c.Name == "")
			if ch := c.Chart; ch != nil {
				add(cp+"chart.", fChartRepository, ch.Repository == "")
				add(cp+"chart.", fChartName, ch.Name == "")
				add(cp+"chart.", fChartVersion, ch.Version == "")
			}
			in := c.Install
			if in == nil {
				continue
			}
			for k, h := range in.HealthCheckExprs {
				hp := cp + "install." + sprintIndex("healthCheckExprs", k)
				add(hp, fCheckAPIVersion, h.APIVersion == "")
				add(hp, fCheckKind, h.Kind == "")
				add(hp, fCheckCurrent, h.Current == "")
			}
			for k, r := range in.ReadyWhen {
				rp := cp + "install." + sprintIndex("readyWhen", k)
				add(rp, fReadyAPIVersion, r.APIVersion == "")
				add(rp, fReadyKind, r.Kind == "")
				add(rp, fReadyName, r.Name == "")
				add(rp, fReadyCondition, r.Condition == "")
			}
		}
	}
	return out
}

// sprintIndex returns "list[i]."
func sprintIndex(list string, i int) string {
	return list + "[" + strconv.Itoa(i) + "]."
}
