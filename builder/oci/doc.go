// Package oci holds the OCI side of a build: the artifacts kbuild writes (a
// chart as `helm push` lays it out, a referrer that names its subject) and
// the targets it pushes them to, a remote registry (RegistryTarget) or a
// local OCI image layout (LayoutTarget), behind one Target interface.
package oci
