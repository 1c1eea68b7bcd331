module kbuild.dev/kbuild

go 1.26.0

require (
	github.com/CycloneDX/cyclonedx-go v0.12.0 // indirect
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/google/go-containerregistry v0.22.1 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	helm.sh/helm/v3 v3.22.0 // indirect
	sigs.k8s.io/kustomize/kyaml v0.21.1 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)
