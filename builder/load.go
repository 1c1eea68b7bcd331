package builder

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/sources"
)

// RecipeFile is the name of a recipe inside its directory.
const RecipeFile = "recipe.yaml"

// maxRecipeSize caps recipe.yaml.
const maxRecipeSize = 4 << 20

// Loaded is a recipe read from its directory and checked statically.
type Loaded struct {
	Dir    string
	File   string
	Recipe *recipe.Recipe
	// Pos maps field paths to lines for reporting.
	Pos recipe.Positions
	// Digest is "sha256:<hex>" of recipe.yaml's bytes.
	Digest string
	// Problems are the static findings; Problems.Errors() empty means it
	// may be built.
	Problems recipe.Problems
}

// Load reads DIR/recipe.yaml, decodes it strictly and validates it. A
// decoding failure is returned as problems (with lines) rather than an
// error; err is for I/O failures.
func Load(dir string) (*Loaded, error) {
	file := filepath.Join(dir, RecipeFile)
	data, err := readRecipeFile(dir, file)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	l := &Loaded{Dir: dir, File: file, Digest: "sha256:" + hex.EncodeToString(sum[:])}
	r, pos, err := recipe.Parse(file, data)
	l.Pos = pos
	var pe *recipe.ProblemsError
	switch {
	case errors.As(err, &pe):
		l.Problems = pe.Problems
		return l, nil
	case err != nil:
		l.Problems = recipe.Problems{{Message: err.Error()}}
		return l, nil
	}
	l.Recipe = r
	l.Problems = recipe.Validate(r, pos)
	return l, nil
}

// readRecipeFile reads file if it is a regular file (a symlink to one is
// followed) of at most maxRecipeSize bytes. A device, FIFO or socket is
// refused before it is opened, and it is opened non-blocking and checked
// again, so that neither /dev/zero nor a FIFO swapped in can make it read
// without end or hang.
func readRecipeFile(dir, file string) ([]byte, error) {
	fi, err := os.Stat(file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s: no %s; %w", dir, RecipeFile, ErrNoRecipe)
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, refusal(sources.ErrUnsafe, "%s: not a regular file (%s); a recipe is a plain YAML file", file, fi.Mode().Type())
	}
	if fi.Size() > maxRecipeSize {
		return nil, refusal(sources.ErrTooLarge, "%s: %d bytes is over the %d-byte limit for a recipe", file, fi.Size(), maxRecipeSize)
	}
	fh, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if fi, err = fh.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, refusal(sources.ErrUnsafe, "%s: not a regular file (%s); a recipe is a plain YAML file", file, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxRecipeSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(data) > maxRecipeSize {
		return nil, refusal(sources.ErrTooLarge, "%s: grew over the %d-byte limit for a recipe while it was read", file, maxRecipeSize)
	}
	return data, nil
}

// Err returns a *recipe.ProblemsError when the recipe has errors, else nil.
func (l *Loaded) Err() error {
	if len(l.Problems.Errors()) == 0 {
		return nil
	}
	return &recipe.ProblemsError{File: l.File, Problems: l.Problems}
}

// FindRecipes expands each argument to the recipe directories it names: a
// directory holding recipe.yaml, or a directory whose subdirectories do.
// The result is sorted and free of duplicates.
func FindRecipes(args []string) ([]string, error) {
	seen := map[string]bool{}
	var dirs []string
	add := func(d string) {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, a := range args {
		if _, err := os.Stat(filepath.Join(a, RecipeFile)); err == nil {
			add(a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		found := false
		for _, e := range entries {
			if e.IsDir() {
				if _, err := os.Stat(filepath.Join(a, e.Name(), RecipeFile)); err == nil {
					add(filepath.Join(a, e.Name()))
					found = true
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no %s in it or in its subdirectories", a, RecipeFile)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// refusedError is an error whose message is its own but which is also
// kind (sources.ErrTooLarge, sources.ErrUnsafe) for errors.Is.
type refusedError struct {
	msg  string
	kind error
}

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return e.kind }

// refusal returns an error with the formatted message that is also kind.
func refusal(kind error, format string, args ...any) error {
	return &refusedError{fmt.Sprintf(format, args...), kind}
}
