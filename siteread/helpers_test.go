package siteread

import (
	"errors"
	"strings"

	"kbuild.dev/kbuild/index"
	"kbuild.dev/kbuild/spec"
	"kbuild.dev/kbuild/trust"
)

// testRecord is the build record of name at version build 1 with one
// chart in repository.
func testRecord(name, version, repository string) *spec.PackageSource {
	return &spec.PackageSource{APIVersion: spec.RecordAPIVersion, Kind: spec.RecordKind,
		Metadata: spec.RecordMetadata{Name: name, Annotations: map[string]string{index.DescriptionAnnotation: "The " + name + " package"}},
		Spec: spec.PackageSpec{Version: version, Build: 1, Variants: []spec.Variant{{Name: "default", Components: []spec.Component{{Name: name,
			Chart: &spec.ChartRef{Repository: repository, Name: name, Version: version + "-1", Digest: "sha256:" + strings.Repeat("a", 64)}}}}}}}
}

// signatureFileOf signs data with every signer and returns the content of
// its .sig file.
func signatureFileOf(data []byte, signers []trust.Signer) ([]byte, error) {
	if len(signers) == 0 {
		return nil, errors.New("no signing key")
	}
	sigs, err := trust.Sign(data, signers...)
	if err != nil {
		return nil, err
	}
	return index.MarshalSignatures(sigs)
}
