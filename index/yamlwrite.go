package index

import "kbuild.dev/kbuild/internal/yamlscan"

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
func (w *ywriter) specStr(col int, f specField, v string) {
	if v != "" || !f.omitEmpty() {
		w.Key(col, f.name())
		w.Str(col, v)
	}
}

func (w *ywriter) specInt(col int, f specField, v int) {
	if v != 0 || !f.omitEmpty() {
		w.Key(col, f.name())
		w.Int(v)
	}
}

func (w *ywriter) specBool(col int, f specField, v bool) {
	if v || !f.omitEmpty() {
		w.Key(col, f.name())
		w.Bool(v)
	}
}

func (w *ywriter) specStrings(col int, f specField, v []string) {
	switch {
	case len(v) > 0:
		w.FieldStrings(col, f.name(), v)
	case f.omitEmpty():
	case v == nil:
		w.Key(col, f.name())
		w.Empty("null")
	default:
		w.Key(col, f.name())
		w.Empty("[]")
	}
}

// Writers of the spec types, fields in yaml.v2 key order. TestWriterFieldOrder
// checks the order against the structs' JSON names.

func writeSpec(w *ywriter, col int, s *PackageSpec) {
	w.Mapping(col, func(col int) {
		w.specInt(col, fSpecBuild, s.Build)
		w.specStrings(col, fSpecConflicts, s.Conflicts)
		w.specStrings(col, fSpecCRDs, s.CRDs)
		w.specStrings(col, fSpecImages, s.Images)
		if s.Permissions != nil {
			w.Key(col, fSpecPermissions.name())
			writePermissions(w, col+2, s.Permissions)
		}
		w.specStrings(col, fSpecProvides, s.Provides)
		if s.Rollback != nil {
			w.Key(col, fSpecRollback.name())
			w.Mapping(col+2, func(col int) { w.specBool(col, fRollbackSafe, s.Rollback.Safe) })
		}
		if s.SourceRef != nil {
			w.Key(col, fSpecSourceRef.name())
			w.Mapping(col+2, func(col int) {
				r := s.SourceRef
				w.specStr(col, fRefKind, r.Kind)
				w.specStr(col, fRefName, r.Name)
				w.specStr(col, fRefNamespace, r.Namespace)
				w.specStr(col, fRefPath, r.Path)
				w.specStr(col, fRefURL, r.URL)
			})
		}
		if len(s.Variants) > 0 {
			w.Key(col, fSpecVariants.name())
			for i := range s.Variants {
				w.Item(col)
				writeVariant(w, col+2, &s.Variants[i])
			}
		}
		w.specStr(col, fSpecVersion, s.Version)
	})
}

func writePermissions(w *ywriter, col int, p *Permissions) {
	w.Mapping(col, func(col int) {
		w.specBool(col, fPermClusterWide, p.ClusterWide)
		if len(p.Rules) > 0 {
			w.Key(col, fPermRules.name())
			for i := range p.Rules {
				r := &p.Rules[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStrings(col, fRuleAPIGroups, r.APIGroups)
					w.specStrings(col, fRuleNonResourceURLs, r.NonResourceURLs)
					w.specStrings(col, fRuleResourceNames, r.ResourceNames)
					w.specStrings(col, fRuleResources, r.Resources)
					w.specStrings(col, fRuleVerbs, r.Verbs)
				})
			}
		}
	})
}

func writeVariant(w *ywriter, col int, v *Variant) {
	w.Mapping(col, func(col int) {
		if len(v.Components) > 0 {
			w.Key(col, fVariantComponents.name())
			for i := range v.Components {
				w.Item(col)
				writeComponent(w, col+2, &v.Components[i])
			}
		}
		w.specStrings(col, fVariantDependsOn, v.DependsOn)
		if len(v.Libraries) > 0 {
			w.Key(col, fVariantLibraries.name())
			for i := range v.Libraries {
				l := &v.Libraries[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStr(col, fLibName, l.Name)
					w.specStr(col, fLibPath, l.Path)
				})
			}
		}
		w.specStr(col, fVariantName, v.Name)
		if len(v.Requires) > 0 {
			w.Key(col, fVariantRequires.name())
			for i := range v.Requires {
				q := &v.Requires[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStr(col, fReqCapability, q.Capability)
					w.specBool(col, fReqOptional, q.Optional)
					w.specStr(col, fReqPackage, q.Package)
					w.specStr(col, fReqVersion, q.Version)
				})
			}
		}
	})
}

func writeComponent(w *ywriter, col int, c *Component) {
	w.Mapping(col, func(col int) {
		if c.Chart != nil {
			w.Key(col, fCompChart.name())
			w.Mapping(col+2, func(col int) {
				w.specStr(col, fChartDigest, c.Chart.Digest)
				w.specStr(col, fChartName, c.Chart.Name)
				w.specStr(col, fChartRepository, c.Chart.Repository)
				w.specStr(col, fChartVersion, c.Chart.Version)
			})
		}
		if c.Install != nil {
			w.Key(col, fCompInstall.name())
			writeInstall(w, col+2, c.Install)
		}
		w.specStrings(col, fCompLibraries, c.Libraries)
		w.specStr(col, fCompName, c.Name)
		w.specStr(col, fCompPath, c.Path)
		w.specStrings(col, fCompValuesFiles, c.ValuesFiles)
	})
}

func writeInstall(w *ywriter, col int, in *Install) {
	w.Mapping(col, func(col int) {
		w.specStrings(col, fInstDependsOn, in.DependsOn)
		if len(in.HealthCheckExprs) > 0 {
			w.Key(col, fInstHealthCheckExprs.name())
			for i := range in.HealthCheckExprs {
				h := &in.HealthCheckExprs[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStr(col, fCheckAPIVersion, h.APIVersion)
					w.specStr(col, fCheckCurrent, h.Current)
					w.specStr(col, fCheckFailed, h.Failed)
					w.specStr(col, fCheckInProgress, h.InProgress)
					w.specStr(col, fCheckKind, h.Kind)
				})
			}
		}
		w.specStr(col, fInstNamespace, in.Namespace)
		w.specStr(col, fInstPhase, in.Phase)
		w.specBool(col, fInstPrivileged, in.Privileged)
		if len(in.ReadyWhen) > 0 {
			w.Key(col, fInstReadyWhen.name())
			for i := range in.ReadyWhen {
				rw := &in.ReadyWhen[i]
				w.Item(col)
				w.Mapping(col+2, func(col int) {
					w.specStr(col, fReadyAPIVersion, rw.APIVersion)
					w.specStr(col, fReadyCondition, rw.Condition)
					w.specStr(col, fReadyKind, rw.Kind)
					w.specStr(col, fReadyName, rw.Name)
					w.specStr(col, fReadyNamespace, rw.Namespace)
					w.specStr(col, fReadyStatus, rw.Status)
				})
			}
		}
		w.specStr(col, fInstReleaseName, in.ReleaseName)
		w.specStr(col, fInstUpgradeCRDs, in.UpgradeCRDs)
		w.specStr(col, fInstWaitStrategy, in.WaitStrategy)
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
