package index

import "kbuild.dev/kbuild/spec"

// Fast decoders of the PackageSpec types (see yamlread.go). Each knows its
// fields by their JSON names in SpecFields (the one table the writer and
// the digest encoder use too; TestReaderKnowsEveryField); any other key
// goes to yreader.unknown, which skips it in an index and otherwise gives
// up, and sigs.k8s.io/yaml decides.

func readSpec(r *yreader, s *spec.PackageSpec) (bool, error) {
	return r.ReadMap(func(k string) error { return readSpecField(r, s, k) })
}

func readSpecField(r *yreader, s *spec.PackageSpec, k string) error {
	var err error
	switch k {
	case spec.FieldSpecVersion.Name():
		s.Version, err = r.ReadString(k)
	case spec.FieldSpecBuild.Name():
		s.Build, err = r.ReadInt(k)
	case spec.FieldSpecSourceRef.Name():
		s.SourceRef, err = readPtr(r, &r.slab.srcRefs, readSourceRef)
	case spec.FieldSpecProvides.Name():
		s.Provides, err = r.readStrings(k)
	case spec.FieldSpecConflicts.Name():
		s.Conflicts, err = r.readStrings(k)
	case spec.FieldSpecCRDs.Name():
		s.CRDs, err = r.readStrings(k)
	case spec.FieldSpecPermissions.Name():
		s.Permissions, err = readPtr(r, &r.slab.perms, readPermissions)
	case spec.FieldSpecRollback.Name():
		s.Rollback, err = readPtr(r, &r.slab.rollbacks, func(r *yreader, v *spec.Rollback) (bool, error) {
			return r.ReadMap(func(k string) error {
				if k != spec.FieldRollbackSafe.Name() {
					return r.unknown("rollback", k)
				}
				var err error
				v.Safe, err = r.ReadBool(k)
				return err
			})
		})
	case spec.FieldSpecVariants.Name():
		s.Variants, err = readList(r, &r.slab.variants, readVariant)
	case spec.FieldSpecImages.Name():
		s.Images, err = r.readStrings(k)
	default:
		err = r.unknown("spec", k)
	}
	return err
}

// slabs hand out the values a reader decodes from blocks of many, so that
// an index of 100,000 versions costs thousands of allocations rather than
// millions. Each reader (and each parallel part) has its own. After reset
// the blocks are used again, for a reader whose values are dropped.
type slabs struct {
	strs      slab[string]
	charts    slab[spec.ChartRef]
	installs  slab[spec.Install]
	rollbacks slab[spec.Rollback]
	perms     slab[spec.Permissions]
	srcRefs   slab[spec.SourceRef]
	rules     slab[spec.PolicyRule]
	variants  slab[spec.Variant]
	reqs      slab[spec.Requirement]
	libs      slab[spec.Library]
	comps     slab[spec.Component]
	checks    slab[spec.HealthCheck]
	ready     slab[spec.ReadyWhen]
	versions  slab[IndexVersion]
}

// reset makes every value handed out so far free to be handed out again.
func (s *slabs) reset() {
	s.strs.reset()
	s.charts.reset()
	s.installs.reset()
	s.rollbacks.reset()
	s.perms.reset()
	s.srcRefs.reset()
	s.rules.reset()
	s.variants.reset()
	s.reqs.reset()
	s.libs.reset()
	s.comps.reset()
	s.checks.reset()
	s.ready.reset()
	s.versions.reset()
}

// slab is a list of blocks of T; blocks double from 8 to 512 values, so
// that a small document (one build record) stays small.
type slab[T any] struct {
	blocks [][]T
	cur    int // block being handed out
	used   int // values handed out of it
	tmp    []T // scratch of readList (lists of T never nest)
}

func (s *slab[T]) reset() { s.cur, s.used = 0, 0 }

// take returns n zero values, as a slice that cannot grow into its
// neighbours.
func take[T any](s *slab[T], n int) []T {
	if n == 0 {
		return []T{}
	}
	if n > 512 {
		return make([]T, n)
	}
	for ; s.cur < len(s.blocks); s.cur, s.used = s.cur+1, 0 {
		if b := s.blocks[s.cur]; len(b)-s.used >= n {
			v := b[s.used : s.used+n : s.used+n]
			s.used += n
			clear(v)
			return v
		}
	}
	size := 8
	if len(s.blocks) > 0 {
		size = min(512, 2*len(s.blocks[len(s.blocks)-1]))
	}
	s.blocks = append(s.blocks, make([]T, max(n, size)))
	s.used = n
	return s.blocks[s.cur][:n:n]
}

// readPtr reads an optional struct: nil for null, else a value from pool.
func readPtr[T any](r *yreader, pool *slab[T], read func(*yreader, *T) (bool, error)) (*T, error) {
	p := &take(pool, 1)[0] // wasted when null
	present, err := read(r, p)
	if err != nil || !present {
		return nil, err
	}
	return p, nil
}

// readList reads a sequence of structs; a present empty sequence is an
// empty, non-nil slice and a null entry a zero value, as encoding/json
// makes them.
func readList[T any](r *yreader, pool *slab[T], read func(*yreader, *T) (bool, error)) ([]T, error) {
	out := pool.tmp[:0]
	present, err := r.ReadSeq(func() error {
		var zero T
		out = append(out, zero)
		_, err := read(r, &out[len(out)-1])
		return err
	})
	pool.tmp = out[:0]
	if !present {
		return nil, err
	}
	list := take(pool, len(out))
	copy(list, out)
	return list, err
}

func readSourceRef(r *yreader, v *spec.SourceRef) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldRefKind.Name():
			v.Kind, err = r.ReadString(k)
		case spec.FieldRefName.Name():
			v.Name, err = r.ReadString(k)
		case spec.FieldRefNamespace.Name():
			v.Namespace, err = r.ReadString(k)
		case spec.FieldRefURL.Name():
			v.URL, err = r.ReadString(k)
		case spec.FieldRefPath.Name():
			v.Path, err = r.ReadString(k)
		default:
			err = r.unknown("sourceRef", k)
		}
		return err
	})
}

func readPermissions(r *yreader, v *spec.Permissions) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldPermClusterWide.Name():
			v.ClusterWide, err = r.ReadBool(k)
		case spec.FieldPermRules.Name():
			v.Rules, err = readList(r, &r.slab.rules, readRule)
		default:
			err = r.unknown("permissions", k)
		}
		return err
	})
}

func readRule(r *yreader, v *spec.PolicyRule) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldRuleVerbs.Name():
			v.Verbs, err = r.readStrings(k)
		case spec.FieldRuleAPIGroups.Name():
			v.APIGroups, err = r.readStrings(k)
		case spec.FieldRuleResources.Name():
			v.Resources, err = r.readStrings(k)
		case spec.FieldRuleResourceNames.Name():
			v.ResourceNames, err = r.readStrings(k)
		case spec.FieldRuleNonResourceURLs.Name():
			v.NonResourceURLs, err = r.readStrings(k)
		default:
			err = r.unknown("rule", k)
		}
		return err
	})
}

func readVariant(r *yreader, v *spec.Variant) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldVariantName.Name():
			v.Name, err = r.ReadString(k)
		case spec.FieldVariantDependsOn.Name():
			v.DependsOn, err = r.readStrings(k)
		case spec.FieldVariantRequires.Name():
			v.Requires, err = readList(r, &r.slab.reqs, readRequirement)
		case spec.FieldVariantLibraries.Name():
			v.Libraries, err = readList(r, &r.slab.libs, readLibrary)
		case spec.FieldVariantComponents.Name():
			v.Components, err = readList(r, &r.slab.comps, readComponent)
		default:
			err = r.unknown("variant", k)
		}
		return err
	})
}

func readRequirement(r *yreader, v *spec.Requirement) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldReqPackage.Name():
			v.Package, err = r.ReadString(k)
		case spec.FieldReqCapability.Name():
			v.Capability, err = r.ReadString(k)
		case spec.FieldReqVersion.Name():
			v.Version, err = r.ReadString(k)
		case spec.FieldReqOptional.Name():
			v.Optional, err = r.ReadBool(k)
		default:
			err = r.unknown("requirement", k)
		}
		return err
	})
}

func readLibrary(r *yreader, v *spec.Library) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldLibName.Name():
			v.Name, err = r.ReadString(k)
		case spec.FieldLibPath.Name():
			v.Path, err = r.ReadString(k)
		default:
			err = r.unknown("library", k)
		}
		return err
	})
}

func readComponent(r *yreader, v *spec.Component) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldCompName.Name():
			v.Name, err = r.ReadString(k)
		case spec.FieldCompPath.Name():
			v.Path, err = r.ReadString(k)
		case spec.FieldCompChart.Name():
			v.Chart, err = readPtr(r, &r.slab.charts, readChart)
		case spec.FieldCompInstall.Name():
			v.Install, err = readPtr(r, &r.slab.installs, readInstall)
		case spec.FieldCompLibraries.Name():
			v.Libraries, err = r.readStrings(k)
		case spec.FieldCompValuesFiles.Name():
			v.ValuesFiles, err = r.readStrings(k)
		default:
			err = r.unknown("component", k)
		}
		return err
	})
}

func readChart(r *yreader, v *spec.ChartRef) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldChartRepository.Name():
			v.Repository, err = r.ReadString(k)
		case spec.FieldChartName.Name():
			v.Name, err = r.ReadString(k)
		case spec.FieldChartVersion.Name():
			v.Version, err = r.ReadString(k)
		case spec.FieldChartDigest.Name():
			v.Digest, err = r.ReadString(k)
		default:
			err = r.unknown("chart", k)
		}
		return err
	})
}

func readInstall(r *yreader, v *spec.Install) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldInstReleaseName.Name():
			v.ReleaseName, err = r.ReadString(k)
		case spec.FieldInstNamespace.Name():
			v.Namespace, err = r.ReadString(k)
		case spec.FieldInstPrivileged.Name():
			v.Privileged, err = r.ReadBool(k)
		case spec.FieldInstDependsOn.Name():
			v.DependsOn, err = r.readStrings(k)
		case spec.FieldInstUpgradeCRDs.Name():
			v.UpgradeCRDs, err = r.ReadString(k)
		case spec.FieldInstWaitStrategy.Name():
			v.WaitStrategy, err = r.ReadString(k)
		case spec.FieldInstHealthCheckExprs.Name():
			v.HealthCheckExprs, err = readList(r, &r.slab.checks, readHealthCheck)
		case spec.FieldInstPhase.Name():
			v.Phase, err = r.ReadString(k)
		case spec.FieldInstReadyWhen.Name():
			v.ReadyWhen, err = readList(r, &r.slab.ready, readReadyWhen)
		default:
			err = r.unknown("install", k)
		}
		return err
	})
}

func readHealthCheck(r *yreader, v *spec.HealthCheck) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldCheckAPIVersion.Name():
			v.APIVersion, err = r.ReadString(k)
		case spec.FieldCheckKind.Name():
			v.Kind, err = r.ReadString(k)
		case spec.FieldCheckCurrent.Name():
			v.Current, err = r.ReadString(k)
		case spec.FieldCheckInProgress.Name():
			v.InProgress, err = r.ReadString(k)
		case spec.FieldCheckFailed.Name():
			v.Failed, err = r.ReadString(k)
		default:
			err = r.unknown("healthCheckExprs", k)
		}
		return err
	})
}

func readReadyWhen(r *yreader, v *spec.ReadyWhen) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case spec.FieldReadyAPIVersion.Name():
			v.APIVersion, err = r.ReadString(k)
		case spec.FieldReadyKind.Name():
			v.Kind, err = r.ReadString(k)
		case spec.FieldReadyName.Name():
			v.Name, err = r.ReadString(k)
		case spec.FieldReadyNamespace.Name():
			v.Namespace, err = r.ReadString(k)
		case spec.FieldReadyCondition.Name():
			v.Condition, err = r.ReadString(k)
		case spec.FieldReadyStatus.Name():
			v.Status, err = r.ReadString(k)
		default:
			err = r.unknown("readyWhen", k)
		}
		return err
	})
}

// readRecord reads a build record.
func readRecord(r *yreader, rec *spec.PackageSource) error {
	return r.ReadRoot(func(k string) error {
		var err error
		switch k {
		case "apiVersion":
			rec.APIVersion, err = r.ReadString(k)
		case "kind":
			rec.Kind, err = r.ReadString(k)
		case "metadata":
			_, err = r.ReadMap(func(k string) error {
				var err error
				switch k {
				case "name":
					rec.Metadata.Name, err = r.ReadString(k)
				case "annotations":
					rec.Metadata.Annotations, err = r.ReadStringMap(k)
				default:
					err = r.unknown("metadata", k)
				}
				return err
			})
		case "spec":
			_, err = readSpec(r, &rec.Spec)
		default:
			err = r.unknown("record", k)
		}
		return err
	})
}
