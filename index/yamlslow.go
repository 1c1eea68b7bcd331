package index

import (
	"errors"
	"fmt"
	"reflect"

	"kbuild.dev/kbuild/internal/yamlscan"
)

// MaxSlowYAML caps the documents decoded with sigs.k8s.io/yaml.
const MaxSlowYAML = yamlscan.MaxSlow

// decodeYAML decodes b into v (a pointer) with the fast reader fast, or,
// when it gives up, strictly with sigs.k8s.io/yaml after refusing anchors,
// aliases and several documents.
func decodeYAML(b []byte, what string, v any, fast func(r *yreader) error) error {
	return decodeYAMLOf(b, false, nil, what, v, fast)
}

// decodeYAMLOf is decodeYAML; with share, the fast reader's strings use b
// itself, which must then never be modified; its values come from slab
// (new slabs when nil). A panic of the fast reader is an error.
func decodeYAMLOf(b []byte, share bool, slab *slabs, what string, v any, fast func(r *yreader) error) (err error) {
	r, err := newYReaderOf(b, share, slab)
	if err == nil {
		err = readSafely(r, fast)
	}
	if err == nil {
		return nil
	}
	var bail *yamlscan.Bail
	if !errors.As(err, &bail) {
		return err
	}
	if len(b) > MaxSlowYAML {
		return fmt.Errorf("%s: %v (YAML beyond what kbuild writes is read only in files up to %d MiB)", what, bail, MaxSlowYAML>>20)
	}
	rv := reflect.ValueOf(v).Elem()
	rv.SetZero()
	if err := yamlscan.DecodeStrict(b, what, v); err != nil {
		rv.SetZero()
		return err
	}
	return nil
}

// readSafely runs fast on r, a panic becoming a *yamlscan.PanicError at
// r's line.
func readSafely(r *yreader, fast func(r *yreader) error) (err error) {
	defer yamlscan.Recover(&err, r.Reader)
	return fast(r)
}

// safely runs f, a panic becoming a *yamlscan.PanicError.
func safely(f func() error) (err error) {
	defer yamlscan.Recover(&err, nil)
	return f()
}
