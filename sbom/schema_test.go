package sbom

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The official CycloneDX 1.6 JSON schema and the two schemas it refers to
// ship in the cyclonedx-go module (schema/); the JSF one is named
// jsf-0.82.schemax.json there.
var schemaFiles = map[string]string{
	"http://cyclonedx.org/schema/bom-1.6.schema.json":  "bom-1.6.schema.json",
	"http://cyclonedx.org/schema/spdx.schema.json":     "spdx.schema.json",
	"http://cyclonedx.org/schema/jsf-0.82.schema.json": "jsf-0.82.schemax.json",
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// cyclonedxSchema compiles the CycloneDX 1.6 schema from the module cache,
// offline.
func cyclonedxSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/CycloneDX/cyclonedx-go").Output()
		if err != nil {
			schemaErr = err
			return
		}
		dir := filepath.Join(strings.TrimSpace(string(out)), "schema")
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		for url, file := range schemaFiles {
			f, err := os.Open(filepath.Join(dir, file))
			if err != nil {
				schemaErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(f)
			f.Close()
			if err != nil {
				schemaErr = err
				return
			}
			if err := c.AddResource(url, doc); err != nil {
				schemaErr = err
				return
			}
		}
		schema, schemaErr = c.Compile(SchemaURL)
	})
	if schemaErr != nil {
		t.Fatalf("loading the CycloneDX 1.6 schema from the cyclonedx-go module: %v (run go mod download)", schemaErr)
	}
	return schema
}

// validateBOM checks data against the CycloneDX 1.6 JSON schema.
func validateBOM(t *testing.T, data []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("BOM is not JSON: %v", err)
	}
	if err := cyclonedxSchema(t).Validate(inst); err != nil {
		t.Fatalf("BOM does not validate against CycloneDX 1.6: %v", err)
	}
}

func TestSchemaRejectsInvalid(t *testing.T) {
	bad := []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","version":1,"components":[{"type":"no-such-type","name":"x"}]}`)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if err := cyclonedxSchema(t).Validate(inst); err == nil {
		t.Fatal("Validate(component of type no-such-type) = nil, want an error: the schema check would pass anything")
	}
}
