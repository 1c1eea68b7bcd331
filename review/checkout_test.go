package review

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/testenv"
	"kbuild.dev/kbuild/sources"
)

// member is one entry of a test tar stream shaped like git archive's.
type member struct {
	name, body, link string
	typ              byte
}

func tarStream(t *testing.T, ms ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	// git archive starts with a pax global header holding the commit.
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "0123456789abcdef0123456789abcdef01234567"}, Format: tar.FormatPAX}); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		h := &tar.Header{Name: m.name, Typeflag: m.typ, Linkname: m.link, Mode: 0o644, Size: int64(len(m.body))}
		if m.typ == tar.TypeDir || m.typ == tar.TypeSymlink {
			h.Size, h.Mode = 0, 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(m.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExtractTreeHostile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []member
		msg     string
	}{
		{"symlink then write through it", []member{
			{name: "out", typ: tar.TypeSymlink, link: "../../outside"},
			{name: "out/recipe.yaml", body: "written outside"},
		}, `symlink to "../../outside", outside`},
		{"symlink to an absolute directory then write through it", []member{
			{name: "etc", typ: tar.TypeSymlink, link: "/tmp"},
			{name: "etc/pwned", body: "x"},
		}, `symlink to "/tmp", outside`},
		{"symlink inside then write through it", []member{
			{name: "d/", typ: tar.TypeDir},
			{name: "l", typ: tar.TypeSymlink, link: "d"},
			{name: "l/recipe.yaml", body: "x"},
		}, `lies below "l"`},
		{"symlink leaving the recipe", []member{
			{name: "recipe.yaml", body: "kind: Recipe\n"},
			{name: "values.yaml", typ: tar.TypeSymlink, link: "../../../etc/passwd"},
		}, "outside the extraction directory"},
		{"absolute name", []member{{name: "/etc/kbuild-pwned", body: "x"}}, "absolute"},
		{"dot-dot name", []member{{name: "a/../../kbuild-pwned", body: "x"}}, "leaves the extraction directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			outside := filepath.Join(tmp, "outside")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(tmp, "tree", "recipe")
			err := extractTree(context.Background(), bytes.NewReader(tarStream(t, tc.members...)), filepath.Join(tmp, "spool.tar"), dst)
			if !errors.Is(err, sources.ErrUnsafe) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("extractTree = %v, want an error wrapping sources.ErrUnsafe containing %q", err, tc.msg)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("extractTree wrote %d entries outside the tree, through a symlink", len(entries))
			}
			if _, err := os.Lstat(dst); !os.IsNotExist(err) {
				t.Errorf("extractTree left %s behind after refusing the archive (Lstat: %v)", dst, err)
			}
			if _, err := os.Lstat(filepath.Join(tmp, "spool.tar")); !os.IsNotExist(err) {
				t.Errorf("extractTree left its spool file behind")
			}
		})
	}
}

func TestExtractTree(t *testing.T) {
	tmp := t.TempDir()
	dst := filepath.Join(tmp, "tree", "recipe")
	stream := tarStream(t,
		member{name: "recipe.yaml", body: "kind: Recipe\n"},
		member{name: "files/", typ: tar.TypeDir},
		member{name: "files/cm.yaml", body: "kind: ConfigMap\n"},
		member{name: "values.yaml", typ: tar.TypeSymlink, link: "files/cm.yaml"},
	)
	if err := extractTree(context.Background(), bytes.NewReader(stream), filepath.Join(tmp, "spool.tar"), dst); err != nil {
		t.Fatalf("extractTree: %v", err)
	}
	for file, want := range map[string]string{"recipe.yaml": "kind: Recipe\n", "files/cm.yaml": "kind: ConfigMap\n", "values.yaml": "kind: ConfigMap\n"} {
		got, err := os.ReadFile(filepath.Join(dst, file))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", file, got, err, want)
		}
	}
	if link, err := os.Readlink(filepath.Join(dst, "values.yaml")); err != nil || link != "files/cm.yaml" {
		t.Errorf("values.yaml links to %q, %v; want files/cm.yaml", link, err)
	}
}

func TestCheckoutRecipe(t *testing.T) {
	testenv.Tool(t, "git")
	repo := t.TempDir()
	dir := filepath.Join(repo, "recipes", "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("recipe.yaml", "build: 1\n")
	write("values.yaml", "replicas: 1\n")
	testenv.Git(t, repo, "init", "-q")
	testenv.Git(t, repo, "add", ".")
	testenv.Git(t, repo, "commit", "-q", "-m", "one")
	write("recipe.yaml", "build: 2\n")
	testenv.Git(t, repo, "commit", "-q", "-am", "two")

	base, cleanup, err := CheckoutRecipe(context.Background(), dir, "HEAD~1")
	if err != nil {
		t.Fatalf("CheckoutRecipe(HEAD~1): %v", err)
	}
	got, err := os.ReadFile(filepath.Join(base, "recipe.yaml"))
	if err != nil || string(got) != "build: 1\n" {
		t.Errorf("recipe.yaml at HEAD~1 = %q, %v; want %q", got, err, "build: 1\n")
	}
	if filepath.Base(base) != "app" {
		t.Errorf("checked-out directory %s; want it named app, like the recipe", base)
	}
	cleanup()
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s", base)
	}

	if err := os.MkdirAll(filepath.Join(repo, "recipes", "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	base, cleanup, err = CheckoutRecipe(context.Background(), filepath.Join(repo, "recipes", "new"), "HEAD")
	defer cleanup()
	if err != nil || base != "" {
		t.Errorf("CheckoutRecipe of a recipe absent at HEAD = %q, %v; want \"\", nil (a new package)", base, err)
	}
	if _, _, err := CheckoutRecipe(context.Background(), dir, "no-such-ref"); err == nil || !strings.Contains(err.Error(), `"no-such-ref" is not a commit`) {
		t.Errorf("CheckoutRecipe(no-such-ref) = %v; want an error naming the ref", err)
	}
}
