package spec

import "strconv"

// Field names one field of the spec types. The constants are indexes
// into SpecFields, from which the canonical JSON encoder (specjson.go), the
// YAML reader (specread.go) and writer (yamlwrite.go) and RequiredEmpty
// take each field's name and omitempty.
type Field uint8

// Fields of the spec types, grouped by type in kubepkg's field order.
const (
	FieldSpecVersion Field = iota
	FieldSpecBuild
	FieldSpecSourceRef
	FieldSpecProvides
	FieldSpecConflicts
	FieldSpecCRDs
	FieldSpecPermissions
	FieldSpecRollback
	FieldSpecVariants
	FieldSpecImages

	FieldRefKind
	FieldRefName
	FieldRefNamespace
	FieldRefURL
	FieldRefPath

	FieldPermClusterWide
	FieldPermRules

	FieldRuleVerbs
	FieldRuleAPIGroups
	FieldRuleResources
	FieldRuleResourceNames
	FieldRuleNonResourceURLs

	FieldRollbackSafe

	FieldVariantName
	FieldVariantDependsOn
	FieldVariantRequires
	FieldVariantLibraries
	FieldVariantComponents

	FieldReqPackage
	FieldReqCapability
	FieldReqVersion
	FieldReqOptional

	FieldLibName
	FieldLibPath

	FieldCompName
	FieldCompPath
	FieldCompChart
	FieldCompInstall
	FieldCompLibraries
	FieldCompValuesFiles

	FieldChartRepository
	FieldChartName
	FieldChartVersion
	FieldChartDigest

	FieldInstReleaseName
	FieldInstNamespace
	FieldInstPrivileged
	FieldInstDependsOn
	FieldInstUpgradeCRDs
	FieldInstWaitStrategy
	FieldInstHealthCheckExprs
	FieldInstPhase
	FieldInstReadyWhen

	FieldCheckAPIVersion
	FieldCheckKind
	FieldCheckCurrent
	FieldCheckInProgress
	FieldCheckFailed

	FieldReadyAPIVersion
	FieldReadyKind
	FieldReadyName
	FieldReadyNamespace
	FieldReadyCondition
	FieldReadyStatus

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
	FieldSpecVersion:     {"PackageSpec", "version", true},
	FieldSpecBuild:       {"PackageSpec", "build", true},
	FieldSpecSourceRef:   {"PackageSpec", "sourceRef", true},
	FieldSpecProvides:    {"PackageSpec", "provides", true},
	FieldSpecConflicts:   {"PackageSpec", "conflicts", true},
	FieldSpecCRDs:        {"PackageSpec", "crds", true},
	FieldSpecPermissions: {"PackageSpec", "permissions", true},
	FieldSpecRollback:    {"PackageSpec", "rollback", true},
	FieldSpecVariants:    {"PackageSpec", "variants", true},
	FieldSpecImages:      {"PackageSpec", "images", true},

	FieldRefKind:      {"SourceRef", "kind", false},
	FieldRefName:      {"SourceRef", "name", true},
	FieldRefNamespace: {"SourceRef", "namespace", true},
	FieldRefURL:       {"SourceRef", "url", true},
	FieldRefPath:      {"SourceRef", "path", true},

	FieldPermClusterWide: {"Permissions", "clusterWide", true},
	FieldPermRules:       {"Permissions", "rules", true},

	FieldRuleVerbs:           {"PolicyRule", "verbs", false},
	FieldRuleAPIGroups:       {"PolicyRule", "apiGroups", true},
	FieldRuleResources:       {"PolicyRule", "resources", true},
	FieldRuleResourceNames:   {"PolicyRule", "resourceNames", true},
	FieldRuleNonResourceURLs: {"PolicyRule", "nonResourceURLs", true},

	FieldRollbackSafe: {"Rollback", "safe", true},

	FieldVariantName:       {"Variant", "name", false},
	FieldVariantDependsOn:  {"Variant", "dependsOn", true},
	FieldVariantRequires:   {"Variant", "requires", true},
	FieldVariantLibraries:  {"Variant", "libraries", true},
	FieldVariantComponents: {"Variant", "components", true},

	FieldReqPackage:    {"Requirement", "package", true},
	FieldReqCapability: {"Requirement", "capability", true},
	FieldReqVersion:    {"Requirement", "version", true},
	FieldReqOptional:   {"Requirement", "optional", true},

	FieldLibName: {"Library", "name", true},
	FieldLibPath: {"Library", "path", false},

	FieldCompName:        {"Component", "name", false},
	FieldCompPath:        {"Component", "path", true},
	FieldCompChart:       {"Component", "chart", true},
	FieldCompInstall:     {"Component", "install", true},
	FieldCompLibraries:   {"Component", "libraries", true},
	FieldCompValuesFiles: {"Component", "valuesFiles", true},

	FieldChartRepository: {"ChartRef", "repository", false},
	FieldChartName:       {"ChartRef", "name", false},
	FieldChartVersion:    {"ChartRef", "version", false},
	FieldChartDigest:     {"ChartRef", "digest", true},

	FieldInstReleaseName:      {"Install", "releaseName", true},
	FieldInstNamespace:        {"Install", "namespace", true},
	FieldInstPrivileged:       {"Install", "privileged", true},
	FieldInstDependsOn:        {"Install", "dependsOn", true},
	FieldInstUpgradeCRDs:      {"Install", "upgradeCRDs", true},
	FieldInstWaitStrategy:     {"Install", "waitStrategy", true},
	FieldInstHealthCheckExprs: {"Install", "healthCheckExprs", true},
	FieldInstPhase:            {"Install", "phase", true},
	FieldInstReadyWhen:        {"Install", "readyWhen", true},

	FieldCheckAPIVersion: {"HealthCheck", "apiVersion", false},
	FieldCheckKind:       {"HealthCheck", "kind", false},
	FieldCheckCurrent:    {"HealthCheck", "current", false},
	FieldCheckInProgress: {"HealthCheck", "inProgress", true},
	FieldCheckFailed:     {"HealthCheck", "failed", true},

	FieldReadyAPIVersion: {"ReadyWhen", "apiVersion", false},
	FieldReadyKind:       {"ReadyWhen", "kind", false},
	FieldReadyName:       {"ReadyWhen", "name", false},
	FieldReadyNamespace:  {"ReadyWhen", "namespace", true},
	FieldReadyCondition:  {"ReadyWhen", "condition", false},
	FieldReadyStatus:     {"ReadyWhen", "status", true},
}

// Name is the field's JSON name in kubepkg's types.
func (f Field) Name() string { return SpecFields[f].JSON }

// OmitEmpty reports whether kubepkg's types tag the field omitempty.
func (f Field) OmitEmpty() bool { return SpecFields[f].OmitEmpty }

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
	add := func(path string, f Field, empty bool) {
		if empty && !f.OmitEmpty() {
			out = append(out, EmptyField{Path: path + f.Name(), Type: SpecFields[f].Type, JSON: f.Name()})
		}
	}
	if r := s.SourceRef; r != nil {
		add("sourceRef.", FieldRefKind, r.Kind == "")
	}
	if p := s.Permissions; p != nil {
		for i, r := range p.Rules {
			add(sprintIndex("permissions.rules", i), FieldRuleVerbs, len(r.Verbs) == 0)
		}
	}
	for i := range s.Variants {
		v := &s.Variants[i]
		vp := sprintIndex("variants", i)
		add(vp, FieldVariantName, v.Name == "")
		for j, l := range v.Libraries {
			add(vp+sprintIndex("libraries", j), FieldLibPath, l.Path == "")
		}
		for j := range v.Components {
			c := &v.Components[j]
			cp := vp + sprintIndex("components", j)
			add(cp, FieldCompName, c.Name == "")
			if ch := c.Chart; ch != nil {
				add(cp+"chart.", FieldChartRepository, ch.Repository == "")
				add(cp+"chart.", FieldChartName, ch.Name == "")
				add(cp+"chart.", FieldChartVersion, ch.Version == "")
			}
			in := c.Install
			if in == nil {
				continue
			}
			for k, h := range in.HealthCheckExprs {
				hp := cp + "install." + sprintIndex("healthCheckExprs", k)
				add(hp, FieldCheckAPIVersion, h.APIVersion == "")
				add(hp, FieldCheckKind, h.Kind == "")
				add(hp, FieldCheckCurrent, h.Current == "")
			}
			for k, r := range in.ReadyWhen {
				rp := cp + "install." + sprintIndex("readyWhen", k)
				add(rp, FieldReadyAPIVersion, r.APIVersion == "")
				add(rp, FieldReadyKind, r.Kind == "")
				add(rp, FieldReadyName, r.Name == "")
				add(rp, FieldReadyCondition, r.Condition == "")
			}
		}
	}
	return out
}

// sprintIndex returns "list[i]."
func sprintIndex(list string, i int) string {
	return list + "[" + strconv.Itoa(i) + "]."
}
