package index

// Fast decoders of the PackageSpec types (see yamlread.go). Each knows its
// fields by their JSON names in SpecFields (the one table the writer and
// the digest encoder use too; TestReaderKnowsEveryField); any other key
// goes to yreader.unknown, which skips it in an index and otherwise gives
// up, and sigs.k8s.io/yaml decides.

func readSpec(r *yreader, s *PackageSpec) (bool, error) {
	return r.ReadMap(func(k string) error { return readSpecField(r, s, k) })
}

func readSpecField(r *yreader, s *PackageSpec, k string) error {
	var err error
	switch k {
	case fSpecVersion.name():
		s.Version, err = r.ReadString(k)
	case fSpecBuild.name():
		s.Build, err = r.ReadInt(k)
	case fSpecSourceRef.name():
		s.SourceRef, err = readPtr(r, &r.slab.srcRefs, readSourceRef)
	case fSpecProvides.name():
		s.Provides, err = r.readStrings(k)
	case fSpecConflicts.name():
		s.Conflicts, err = r.readStrings(k)
	case fSpecCRDs.name():
		s.CRDs, err = r.readStrings(k)
	case fSpecPermissions.name():
		s.Permissions, err = readPtr(r, &r.slab.perms, readPermissions)
	case fSpecRollback.name():
		s.Rollback, err = readPtr(r, &r.slab.rollbacks, func(r *yreader, v *Rollback) (bool, error) {
			return r.ReadMap(func(k string) error {
				if k != fRollbackSafe.name() {
					return r.unknown("rollback", k)
				}
				var err error
				v.Safe, err = r.ReadBool(k)
				return err
			})
		})
	case fSpecVariants.name():
		s.Variants, err = readList(r, &r.slab.variants, readVariant)
	case fSpecImages.name():
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
	charts    slab[ChartRef]
	installs  slab[Install]
	rollbacks slab[Rollback]
	perms     slab[Permissions]
	srcRefs   slab[SourceRef]
	rules     slab[PolicyRule]
	variants  slab[Variant]
	reqs      slab[Requirement]
	libs      slab[Library]
	comps     slab[Component]
	checks    slab[HealthCheck]
	ready     slab[ReadyWhen]
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

func readSourceRef(r *yreader, v *SourceRef) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fRefKind.name():
			v.Kind, err = r.ReadString(k)
		case fRefName.name():
			v.Name, err = r.ReadString(k)
		case fRefNamespace.name():
			v.Namespace, err = r.ReadString(k)
		case fRefURL.name():
			v.URL, err = r.ReadString(k)
		case fRefPath.name():
			v.Path, err = r.ReadString(k)
		default:
			err = r.unknown("sourceRef", k)
		}
		return err
	})
}

func readPermissions(r *yreader, v *Permissions) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fPermClusterWide.name():
			v.ClusterWide, err = r.ReadBool(k)
		case fPermRules.name():
			v.Rules, err = readList(r, &r.slab.rules, readRule)
		default:
			err = r.unknown("permissions", k)
		}
		return err
	})
}

func readRule(r *yreader, v *PolicyRule) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fRuleVerbs.name():
			v.Verbs, err = r.readStrings(k)
		case fRuleAPIGroups.name():
			v.APIGroups, err = r.readStrings(k)
		case fRuleResources.name():
			v.Resources, err = r.readStrings(k)
		case fRuleResourceNames.name():
			v.ResourceNames, err = r.readStrings(k)
		case fRuleNonResourceURLs.name():
			v.NonResourceURLs, err = r.readStrings(k)
		default:
			err = r.unknown("rule", k)
		}
		return err
	})
}

func readVariant(r *yreader, v *Variant) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fVariantName.name():
			v.Name, err = r.ReadString(k)
		case fVariantDependsOn.name():
			v.DependsOn, err = r.readStrings(k)
		case fVariantRequires.name():
			v.Requires, err = readList(r, &r.slab.reqs, readRequirement)
		case fVariantLibraries.name():
			v.Libraries, err = readList(r, &r.slab.libs, readLibrary)
		case fVariantComponents.name():
			v.Components, err = readList(r, &r.slab.comps, readComponent)
		default:
			err = r.unknown("variant", k)
		}
		return err
	})
}

func readRequirement(r *yreader, v *Requirement) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fReqPackage.name():
			v.Package, err = r.ReadString(k)
		case fReqCapability.name():
			v.Capability, err = r.ReadString(k)
		case fReqVersion.name():
			v.Version, err = r.ReadString(k)
		case fReqOptional.name():
			v.Optional, err = r.ReadBool(k)
		default:
			err = r.unknown("requirement", k)
		}
		return err
	})
}

func readLibrary(r *yreader, v *Library) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fLibName.name():
			v.Name, err = r.ReadString(k)
		case fLibPath.name():
			v.Path, err = r.ReadString(k)
		default:
			err = r.unknown("library", k)
		}
		return err
	})
}

func readComponent(r *yreader, v *Component) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fCompName.name():
			v.Name, err = r.ReadString(k)
		case fCompPath.name():
			v.Path, err = r.ReadString(k)
		case fCompChart.name():
			v.Chart, err = readPtr(r, &r.slab.charts, readChart)
		case fCompInstall.name():
			v.Install, err = readPtr(r, &r.slab.installs, readInstall)
		case fCompLibraries.name():
			v.Libraries, err = r.readStrings(k)
		case fCompValuesFiles.name():
			v.ValuesFiles, err = r.readStrings(k)
		default:
			err = r.unknown("component", k)
		}
		return err
	})
}

func readChart(r *yreader, v *ChartRef) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fChartRepository.name():
			v.Repository, err = r.ReadString(k)
		case fChartName.name():
			v.Name, err = r.ReadString(k)
		case fChartVersion.name():
			v.Version, err = r.ReadString(k)
		case fChartDigest.name():
			v.Digest, err = r.ReadString(k)
		default:
			err = r.unknown("chart", k)
		}
		return err
	})
}

func readInstall(r *yreader, v *Install) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fInstReleaseName.name():
			v.ReleaseName, err = r.ReadString(k)
		case fInstNamespace.name():
			v.Namespace, err = r.ReadString(k)
		case fInstPrivileged.name():
			v.Privileged, err = r.ReadBool(k)
		case fInstDependsOn.name():
			v.DependsOn, err = r.readStrings(k)
		case fInstUpgradeCRDs.name():
			v.UpgradeCRDs, err = r.ReadString(k)
		case fInstWaitStrategy.name():
			v.WaitStrategy, err = r.ReadString(k)
		case fInstHealthCheckExprs.name():
			v.HealthCheckExprs, err = readList(r, &r.slab.checks, readHealthCheck)
		case fInstPhase.name():
			v.Phase, err = r.ReadString(k)
		case fInstReadyWhen.name():
			v.ReadyWhen, err = readList(r, &r.slab.ready, readReadyWhen)
		default:
			err = r.unknown("install", k)
		}
		return err
	})
}

func readHealthCheck(r *yreader, v *HealthCheck) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fCheckAPIVersion.name():
			v.APIVersion, err = r.ReadString(k)
		case fCheckKind.name():
			v.Kind, err = r.ReadString(k)
		case fCheckCurrent.name():
			v.Current, err = r.ReadString(k)
		case fCheckInProgress.name():
			v.InProgress, err = r.ReadString(k)
		case fCheckFailed.name():
			v.Failed, err = r.ReadString(k)
		default:
			err = r.unknown("healthCheckExprs", k)
		}
		return err
	})
}

func readReadyWhen(r *yreader, v *ReadyWhen) (bool, error) {
	return r.ReadMap(func(k string) error {
		var err error
		switch k {
		case fReadyAPIVersion.name():
			v.APIVersion, err = r.ReadString(k)
		case fReadyKind.name():
			v.Kind, err = r.ReadString(k)
		case fReadyName.name():
			v.Name, err = r.ReadString(k)
		case fReadyNamespace.name():
			v.Namespace, err = r.ReadString(k)
		case fReadyCondition.name():
			v.Condition, err = r.ReadString(k)
		case fReadyStatus.name():
			v.Status, err = r.ReadString(k)
		default:
			err = r.unknown("readyWhen", k)
		}
		return err
	})
}

// readRecord reads a build record.
func readRecord(r *yreader, rec *PackageSource) error {
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
