// Command index is kbuild's scale benchmark of the repository index: it
// writes 100,000 build records (1,000 packages × 100 versions, with
// variants, components, RBAC, health checks and real-looking pinned images)
// and their BuildInfo sidecars, writes into the site the build info, SBOM
// and signed provenance of every version with the functions kbuild
// publish writes them with, then times `kbuild repo index` (read,
// digest, write and sign) and `kbuild repo verify`, reporting wall time,
// CPU time and peak RSS of each against the targets (index+sign ≤ 5 s,
// verify ≤ 2 s, peak RSS ≤ 1 GiB), then kbuild publish over that index
// (one new recipe and nothing new, the base in --site and behind --index
// URL; ≤ 15 s, ≤ 1 GiB) and the whole site by kind of file: apparent
// bytes, file count and gzip'd tar against index.yaml (≤ 2.5 ×). The SBOM
// and provenance files are those kbuild publish --site-keep leaves
// (-site-keep, default 10; 0 writes them for every version).
//
//	go run ./bench/index                      # in a temporary directory
//	go run ./bench/index -dir /tmp/kb -keep   # keep the records and site
//	go run ./bench/index -packages 100        # a tenth of the size
//	go run ./bench/index -site-keep 0         # every version's SBOM and provenance
//	go run ./bench/index -dir /tmp/b -base 100000 [-base-small]  # only a signed base index
//
// Peak RSS comes from /usr/bin/time -v when it is installed, otherwise
// from the child's rusage. It exits 1 when a target is missed.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/internal/dist"
	"kbuild.dev/kbuild/publish"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

var (
	dir      = flag.String("dir", "", "work directory (default: a new temporary directory)")
	keep     = flag.Bool("keep", false, "keep the work directory")
	packages = flag.Int("packages", 1000, "packages to generate")
	versions = flag.Int("versions", 100, "versions per package")
	kbuild   = flag.String("kbuild", "", "kbuild binary (default: built from ./cmd/kbuild)")
	pub      = flag.Bool("publish", true, "also measure kbuild publish over the index")
	siteKeep = flag.Int("site-keep", publish.DefaultSiteKeep, "kbuild publish --site-keep: the newest N versions of each package keep their SBOM and provenance in the site (0: every version)")
)

// Targets on the reference machine (2 cores).
const (
	targetIndex  = 5 * time.Second
	targetVerify = 2 * time.Second
	targetRSS    = 1 << 30
)

func main() {
	flag.Parse()
	if *base > 0 {
		if *dir == "" {
			fmt.Fprintln(os.Stderr, "bench: -base needs -dir")
			os.Exit(2)
		}
		if err := writeBase(*dir, *base, *baseSmall); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	work := *dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "kbuild-bench-index-"); err != nil {
			return err
		}
	}
	if !*keep {
		defer os.RemoveAll(work)
	}
	bin := *kbuild
	if bin == "" {
		bin = filepath.Join(work, "kbuild")
		fmt.Fprintf(os.Stderr, "building kbuild…\n")
		build := exec.Command("go", "build", "-o", bin, "./cmd/kbuild")
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // the binary users get
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/kbuild (run from the repository root): %v\n%s", err, out)
		}
	}
	distDir, site := filepath.Join(work, "dist"), filepath.Join(work, "site")
	os.RemoveAll(site)
	n, recordBytes, err := reuse(distDir)
	if err != nil {
		os.RemoveAll(distDir)
		t0 := time.Now()
		if n, recordBytes, err = generate(distDir); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, "dist-v3.done"), []byte(fmt.Sprintf("%d %d %d %d\n", *packages, *versions, n, recordBytes)), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "generated %d records (%.0f MB) in %s\n", n, float64(recordBytes)/1e6, time.Since(t0).Round(time.Millisecond))
	}
	key, err := trust.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	priv, _ := key.MarshalPEM()
	keyFile := filepath.Join(work, "index.key")
	pubFile := filepath.Join(work, "index.pub")
	if err := os.WriteFile(keyFile, priv, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(pubFile, key.Public().PEM(), 0o644); err != nil {
		return err
	}
	epoch := time.Now().Add(-time.Hour).Truncate(time.Second)
	env := append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", epoch.Unix()))
	t0 := time.Now()
	fileBytes, err := writeVersionFiles(site, epoch, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote the build info of %d versions and the SBOM and provenance of the newest %d of each package (-site-keep; 0: all) (%.0f MB) in %s\n", n, *siteKeep, float64(fileBytes)/1e6, time.Since(t0).Round(time.Millisecond))

	// Warm the page cache so that both runs measure kbuild, not the disk.
	if _, err := measure(env, "cat-dist", "sh", "-c", "find "+distDir+" -name '*.yaml' -exec cat {} + > /dev/null"); err != nil {
		return err
	}
	ix, err := measure(env, "repo index", bin, "repo", "index", distDir, "-o", filepath.Join(site, "index.yaml"), "--sign-key", keyFile)
	if err != nil {
		return err
	}
	if !strings.Contains(ix.stdout, fmt.Sprintf(" %d versions", n)) {
		return fmt.Errorf("repo index did not index the %d records of %s (a symbolic link is not followed): %s", n, distDir, ix.stdout)
	}
	fi, err := os.Stat(filepath.Join(site, "index.yaml"))
	if err != nil {
		return err
	}
	vf, err := measure(env, "repo verify", bin, "repo", "verify", "--index", site, "--public-key", pubFile)
	if err != nil {
		return err
	}

	fmt.Printf("machine: %d CPUs (GOMAXPROCS %d), %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), loadavg())
	fmt.Printf("records: %d (%d packages × %d versions), %.1f MB, %d bytes per record\n", n, *packages, *versions, float64(recordBytes)/1e6, recordBytes/int64(n))
	fmt.Printf("index.yaml: %.1f MB, %d bytes per version\n", float64(fi.Size())/1e6, fi.Size()/int64(n))
	ok := true
	for _, r := range []struct {
		m      *measurement
		target time.Duration
	}{{ix, targetIndex}, {vf, targetVerify}} {
		verdict := "ok"
		if r.m.wall > r.target || r.m.maxRSS > targetRSS {
			verdict, ok = "MISSED", false
		}
		fmt.Printf("%-12s wall %6.2fs (target %2.0fs)  cpu %6.2fs  peak RSS %5.0f MiB (target 1024)  %s\n",
			r.m.name, r.m.wall.Seconds(), r.target.Seconds(), r.m.cpu.Seconds(), float64(r.m.maxRSS)/(1<<20), verdict)
		fmt.Printf("             %s\n", strings.TrimSpace(r.m.stdout))
	}
	if *pub {
		runs, err := benchPublish(bin, work, site, keyFile, pubFile, env)
		if err != nil {
			return err
		}
		for _, r := range runs {
			verdict := "(no target)"
			if r.target > 0 {
				verdict = "ok"
				if r.m.wall > r.target || r.m.maxRSS > targetRSS {
					verdict, ok = "MISSED", false
				}
			}
			fmt.Printf("%-44s wall %6.2fs  cpu %6.2fs  peak RSS %5.0f MiB  requests %d  %s\n",
				r.m.name, r.m.wall.Seconds(), r.m.cpu.Seconds(), float64(r.m.maxRSS)/(1<<20), r.requests, verdict)
		}
		within, err := reportSite(site, fi.Size(), n)
		if err != nil {
			return err
		}
		ok = ok && within
	}
	if *keep {
		fmt.Printf("kept %s\n", work)
	}
	if !ok {
		return fmt.Errorf("a target was missed")
	}
	return nil
}

type measurement struct {
	name   string
	wall   time.Duration
	cpu    time.Duration
	maxRSS int64 // bytes
	stdout string
}

// measure runs a command and reports its wall time, CPU time and peak RSS,
// with /usr/bin/time -v when present.
func measure(env []string, name string, args ...string) (*measurement, error) {
	timeBin, _ := exec.LookPath("/usr/bin/time")
	var cmd *exec.Cmd
	if timeBin != "" {
		cmd = exec.Command(timeBin, append([]string{"-v"}, args...)...)
	} else {
		cmd = exec.Command(args[0], args[1:]...)
	}
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	m := &measurement{name: name, wall: time.Since(start), stdout: stdout.String()}
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s%s", name, err, stdout.String(), stderr.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.maxRSS = ru.Maxrss * 1024
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if timeBin != "" {
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ": ")
			if !ok {
				continue
			}
			switch k {
			case "Maximum resident set size (kbytes)":
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					m.maxRSS = n * 1024
				}
			case "Elapsed (wall clock) time (h:mm:ss or m:ss)":
				if d, ok := parseClock(v); ok {
					m.wall = d
				}
			}
		}
	}
	return m, nil
}

// parseClock parses /usr/bin/time's "m:ss.ss" or "h:mm:ss".
func parseClock(s string) (time.Duration, bool) {
	parts := strings.Split(s, ":")
	var total float64
	for _, p := range parts {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return 0, false
		}
		total = total*60 + f
	}
	return time.Duration(total * float64(time.Second)), true
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	return "load " + strings.Join(strings.Fields(string(b))[:3], " ")
}

// reuse returns the records of an earlier run with the same sizes (-keep).
func reuse(distDir string) (int, int64, error) {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(distDir), "dist-v3.done"))
	if err != nil {
		return 0, 0, err
	}
	var p, v, n int
	var size int64
	if _, err := fmt.Sscan(string(b), &p, &v, &n, &size); err != nil || p != *packages || v != *versions {
		return 0, 0, fmt.Errorf("records of another size")
	}
	fmt.Fprintf(os.Stderr, "reusing %d records in %s\n", n, distDir)
	return n, size, nil
}

// generate writes the records and BuildInfo sidecars, in parallel.
func generate(distDir string) (int, int64, error) {
	if err := os.MkdirAll(distDir, 0o755); err != nil {
		return 0, 0, err
	}
	var total int64
	var mu sync.Mutex
	var firstErr error
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int64
			for p := range jobs {
				for v := 0; v < *versions; v++ {
					rec := record(p, v)
					b, err := index.MarshalRecord(rec)
					if err == nil {
						base := filepath.Join(distDir, fmt.Sprintf("%s-%s-%d", rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build))
						var info []byte
						if err = os.WriteFile(base+".yaml", b, 0o644); err == nil {
							info, err = dist.Marshal(buildInfo(p, v, rec))
						}
						if err == nil {
							err = os.WriteFile(base+".build.yaml", info, 0o644)
						}
					}
					if err != nil {
						mu.Lock()
						firstErr = err
						mu.Unlock()
						for range jobs { // drain, so that the sender finishes
						}
						return
					}
					n += int64(len(b))
				}
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	for p := 0; p < *packages; p++ {
		jobs <- p
	}
	close(jobs)
	wg.Wait()
	return *packages * *versions, total, firstErr
}

// hex64 returns 64 hex digits that stand for a digest: the SHA-256 of
// parts, so that digests compress as badly as real ones do.
func hex64(parts ...int) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d/", p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// record returns version v of package p: the shape of a real operator
// package such as KubeVirt (3 to 9 images, one or two variants, an
// operator and a CR component, RBAC, a health check and a readiness
// condition).
func record(p, v int) *spec.PackageSource {
	name := fmt.Sprintf("pkg-%04d", p)
	version := fmt.Sprintf("%d.%d.%d", v/25, (v/5)%5, v%5)
	build := 1 + v%3
	nImages := 3 + (p+v)%7
	images := make([]string, nImages)
	for i := range images {
		images[i] = fmt.Sprintf("quay.io/%s/%s-component-%d:v%s@sha256:%s", name, name, i, version, hex64(p, v, i))
	}
	chart := func(c string, i int) *spec.ChartRef {
		return &spec.ChartRef{Repository: "oci://ghcr.io/example/packages/" + name, Name: name + "-" + c, Version: fmt.Sprintf("%s-%d", version, build), Digest: "sha256:" + hex64(p, v, 100+i)}
	}
	ns := name + "-system"
	variants := []spec.Variant{{
		Name:     "default",
		Requires: []spec.Requirement{{Package: "cert-manager", Version: ">=1.12 <2"}, {Capability: "api:monitoring.coreos.com/v1", Optional: true}},
		Components: []spec.Component{
			{Name: "operator", Chart: chart("operator", 0), Install: &spec.Install{ReleaseName: name + "-operator", Namespace: ns, WaitStrategy: "watcher", UpgradeCRDs: "CreateReplace",
				HealthCheckExprs: []spec.HealthCheck{{APIVersion: name + ".example.io/v1", Kind: "Config", Current: "has(self.status) && self.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"}}}},
			{Name: "instance", Chart: chart("instance", 1), Install: &spec.Install{ReleaseName: name, Namespace: ns, DependsOn: []string{"operator"},
				ReadyWhen: []spec.ReadyWhen{{APIVersion: name + ".example.io/v1", Kind: "Config", Name: name, Namespace: ns, Condition: "Available", Status: "True"}}}},
		},
	}}
	if p%2 == 0 {
		variants = append(variants, spec.Variant{Name: "minimal", Components: []spec.Component{{Name: "operator", Chart: chart("operator", 0), Install: &spec.Install{ReleaseName: name + "-operator", Namespace: ns}}}})
	}
	return &spec.PackageSource{
		APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
		Metadata: spec.RecordMetadata{Name: name, Annotations: map[string]string{
			index.DescriptionAnnotation: fmt.Sprintf("Package %d of the benchmark: an operator and its instance", p),
			index.HomeAnnotation:        "https://example.com/" + name,
		}},
		Spec: spec.PackageSpec{
			Version: version, Build: build,
			Provides: []string{name, "api:" + name + ".example.io/v1"},
			CRDs:     []string{"configs." + name + ".example.io", "instances." + name + ".example.io"},
			Permissions: &spec.Permissions{ClusterWide: true, Rules: []spec.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"pods", "services", "configmaps", "secrets"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
				{APIGroups: []string{name + ".example.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
			}},
			Rollback: &spec.Rollback{Safe: v%2 == 0},
			Variants: variants,
			Images:   images,
		},
	}
}

// buildInfo returns the BuildInfo of record(p, v) as kbuild build writes
// it: the recipe and commit, two upstream sources (the operator's
// release manifest and the CR manifest, as KubeVirt's recipe has) and
// each chart with its archive and manifest digests.
func buildInfo(p, v int, rec *spec.PackageSource) *spec.BuildInfo {
	name, version, build := rec.Metadata.Name, rec.Spec.Version, rec.Spec.Build
	info := &spec.BuildInfo{
		APIVersion: spec.BuildInfoAPIVersion, Kind: spec.BuildInfoKind,
		Package: name, Version: version, Build: build,
		Recipe: name + "/recipe.yaml", RecipeDigest: "sha256:" + hex64(p, v, 200),
		Commit: hex64(p, v, 201)[:40], Builder: "v0.9.0",
	}
	for i, s := range []string{"cr", "operator"} {
		info.Sources = append(info.Sources, spec.ResolvedSource{
			Name: s, Kind: "url",
			Origin: fmt.Sprintf("https://github.com/example/%s/releases/download/v%s/%s-%s.yaml", name, version, name, s),
			Digest: "sha256:" + hex64(p, v, 300+i),
		})
	}
	seen := map[string]bool{}
	for _, vr := range rec.Spec.Variants {
		for _, c := range vr.Components {
			if c.Chart == nil || seen[c.Chart.Name] {
				continue
			}
			seen[c.Chart.Name] = true
			info.Charts = append(info.Charts, spec.BuiltChart{
				Name: c.Chart.Name, Ref: c.Chart.Repository + "/" + c.Chart.Name + ":" + c.Chart.Version,
				Digest: c.Chart.Digest, Manifest: "sha256:" + hex64(p, v, 400+len(seen)),
			})
		}
	}
	slices.SortFunc(info.Charts, func(a, b spec.BuiltChart) int { return strings.Compare(a.Name, b.Name) })
	return info
}
