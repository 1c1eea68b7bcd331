package index

import (
	"kbuild.dev/kbuild/internal/yamlscan"
	"kbuild.dev/kbuild/spec"
)

// ywriter is the fast YAML writer (internal/yamlscan) with the writers of
// this package's types: byte for byte what sigs.k8s.io/yaml writes for
// them. A part it cannot write sets Slow, and the caller writes that part
// with sigs.k8s.io/yaml instead (yaml_test.go compares both).
type ywriter struct{ yamlscan.Writer }

// newYWriter returns a writer appending to buf.
func newYWriter(buf []byte) *ywriter { return &ywriter{yamlscan.Writer{B: buf}} }

// specStr, specStrings, specBool and specInt write a spec field, leaving
// it out when empty only if SpecFields says kubepkg tags it omitempty, as
// sigs.k8s.io/yaml does for those types: "" for an empty string, null for
// a nil list and [] for an empty one.
func (w *ywriter) specStr(col int, f spec.Field, v string) {
	if v != "" || !f.OmitEmpty() {
		w.Key(col, f.Name())
		w.Str(col, v)
	}
}

func (w *ywriter) specInt(col int, f spec.Field, v int) {
	if v != 0 || !f.OmitEmpty() {
		w.Key(col, f.Name())
		w.Int(v)
	}
}

func (w *ywriter) specBool(col int, f spec.Field, v bool) {
	if v || !f.OmitEmpty() {
		w.Key(col, f.Name())
		w.Bool(v)
	}
}

func (w *ywriter) specStrings(col int, f spec.Field, v []string) {
	switch {
	case len(v) > 0:
		w.FieldStrings(col, f.Name(), v)
	case f.OmitEmpty():
	case v == nil:
		w.Key(col, f.Name())
		w.Empty("null")
	default:
		w.Key(col, f.Name())
		w.Empty("[]")
	}
}

// Writers of the spec types, fields in yaml.v2 key order. TestWriterFieldOrder
// checks the order against the structs' JSON names.

func writeSpec(w *ywriter, col int, s *spec.PackageSpec) {
	w.Mapping(col, func(col int) {
		w.specInt(col, spec.FieldSpecBuild, s.Build)
		w.specStrings(col, spec.FieldSpecConflicts, s.Conflicts)
		w.specStrings(col, spec.FieldSpecCRDs, s.CRDs)
		w.specStrings(col, spec.FieldSpecImages, s.Images)
		if s.Permissions != nil {
			w.Key(col, spec.FieldSpecPermissions.Name())
			writePermissions(w, col+2, s.Permissions)
		}
		w.specStrings(col, spec.FieldSpecProvides, s.Provides)
		if s.Rollback != nil {
			w.Key(col, spec.FieldSpecRollback.Name())
			w.Mapping(col+2, func(col int) { w.specBool(col, spec.FieldRollbackSafe, s.Rollback.Safe) })
		}
		if s.SourceRef != nil {
			w.Key(col, spec.FieldSpecSourceRef.Name())
			w.Mapping(col+2, func(col int) {
				r := s.SourceRef
				w.specStr(col, spec.FieldRefKind, r.Kind)
				w.specStr(col, spec.FieldRefName, r.Name)
				w.specStr(col, spec.FieldRefNamespace, r.Namespace)
				w.specStr(col, spec.FieldRefPath, r.Path)
				w.specStr(col, spec.FieldRefURL, r.URL)
			})
		}
		if len(s.Variants) > 0 {
			w.Key(col, spec.FieldSpecVariants.Name())
			for i := range s.Variants {
				w.Item(col)
				writeVariant(w, col+2, &s.Variants[i])
			}
		}
		w.specStr(col, spec.FieldSpecVersion, s.Version)
	})
}

func writePermissions(w *ywriter, col int, p *spec.Permissions) {
	w.Mapping(col, func(col int) {
		w.specBool(col, spec.FieldPermClusterWide, p.ClusterWide)
		if len(p.Rules) > 0 {
			w.Key(col, spec.FieldPermRules.Name())
			for i := range p.Rules {
				r := &p.Rules[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStrings(col, spec.FieldRuleAPIGroups, r.APIGroups)
					w.specStrings(col, spec.FieldRuleNonResourceURLs, r.NonResourceURLs)
					w.specStrings(col, spec.FieldRuleResourceNames, r.ResourceNames)
					w.specStrings(col, spec.FieldRuleResources, r.Resources)
					w.specStrings(col, spec.FieldRuleVerbs, r.Verbs)
				})
			}
		}
	})
}

func writeVariant(w *ywriter, col int, v *spec.Variant) {
	w.Mapping(col, func(col int) {
		if len(v.Components) > 0 {
			w.Key(col, spec.FieldVariantComponents.Name())
			for i := range v.Components {
				w.Item(col)
				writeComponent(w, col+2, &v.Components[i])
			}
		}
		w.specStrings(col, spec.FieldVariantDependsOn, v.DependsOn)
		if len(v.Libraries) > 0 {
			w.Key(col, spec.FieldVariantLibraries.Name())
			for i := range v.Libraries {
				l := &v.Libraries[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStr(col, spec.FieldLibName, l.Name)
					w.specStr(col, spec.FieldLibPath, l.Path)
				})
			}
		}
		w.specStr(col, spec.FieldVariantName, v.Name)
		if len(v.Requires) > 0 {
			w.Key(col, spec.FieldVariantRequires.Name())
			for i := range v.Requires {
				q := &v.Requires[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStr(col, spec.FieldReqCapability, q.Capability)
					w.specBool(col, spec.FieldReqOptional, q.Optional)
					w.specStr(col, spec.FieldReqPackage, q.Package)
					w.specStr(col, spec.FieldReqVersion, q.Version)
				})
			}
		}
	})
}

func writeComponent(w *ywriter, col int, c *spec.Component) {
	w.Mapping(col, func(col int) {
		if c.Chart != nil {
			w.Key(col, spec.FieldCompChart.Name())
			w.Mapping(col+2, func(col int) {
				w.specStr(col, spec.FieldChartDigest, c.Chart.Digest)
				w.specStr(col, spec.FieldChartName, c.Chart.Name)
				w.specStr(col, spec.FieldChartRepository, c.Chart.Repository)
				w.specStr(col, spec.FieldChartVersion, c.Chart.Version)
			})
		}
		if c.Install != nil {
			w.Key(col, spec.FieldCompInstall.Name())
			writeInstall(w, col+2, c.Install)
		}
		w.specStrings(col, spec.FieldCompLibraries, c.Libraries)
		w.specStr(col, spec.FieldCompName, c.Name)
		w.specStr(col, spec.FieldCompPath, c.Path)
		w.specStrings(col, spec.FieldCompValuesFiles, c.ValuesFiles)
	})
}

func writeInstall(w *ywriter, col int, in *spec.Install) {
	w.Mapping(col, func(col int) {
		w.specStrings(col, spec.FieldInstDependsOn, in.DependsOn)
		if len(in.HealthCheckExprs) > 0 {
			w.Key(col, spec.FieldInstHealthCheckExprs.Name())
			for i := range in.HealthCheckExprs {
				h := &in.HealthCheckExprs[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStr(col, spec.FieldCheckAPIVersion, h.APIVersion)
					w.specStr(col, spec.FieldCheckCurrent, h.Current)
					w.specStr(col, spec.FieldCheckFailed, h.Failed)
					w.specStr(col, spec.FieldCheckInProgress, h.InProgress)
					w.specStr(col, spec.FieldCheckKind, h.Kind)
				})
			}
		}
		w.specStr(col, spec.FieldInstNamespace, in.Namespace)
		w.specStr(col, spec.FieldInstPhase, in.Phase)
		w.specBool(col, spec.FieldInstPrivileged, in.Privileged)
		if len(in.ReadyWhen) > 0 {
			w.Key(col, spec.FieldInstReadyWhen.Name())
			for i := range in.ReadyWhen {
				rw := &in.ReadyWhen[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStr(col, spec.FieldReadyAPIVersion, rw.APIVersion)
					w.specStr(col, spec.FieldReadyCondition, rw.Condition)
					w.specStr(col, spec.FieldReadyKind, rw.Kind)
					w.specStr(col, spec.FieldReadyName, rw.Name)
					w.specStr(col, spec.FieldReadyNamespace, rw.Namespace)
					w.specStr(col, spec.FieldReadyStatus, rw.Status)
				})
			}
		}
		w.specStr(col, spec.FieldInstReleaseName, in.ReleaseName)
		w.specStr(col, spec.FieldInstUpgradeCRDs, in.UpgradeCRDs)
		w.specStr(col, spec.FieldInstWaitStrategy, in.WaitStrategy)
	})
}

func writeSignatures(w *ywriter, col int, sigs []Signature) {
	for i := range sigs {
		s := &sigs[i]
		w.Item(col)
		w.Mapping(col+2, func(col int) {
			w.Key(col, "keyid")
			w.Str(col, s.KeyID)
			w.Key(col, "sig")
			w.Str(col, s.Sig)
		})
	}
}
