package index

import "fmt"

// ConflictError is returned by Merge when a version is built again with
// different content: published versions never change.
type ConflictError struct {
	Package   string
	Version   string
	Build     int
	Published string // digest in the base index
	Built     string // digest of the new build
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s build %d is already published with different content (published %s, built %s); published versions do not change, give the recipe a new build number",
		e.Package, e.Version, e.Build, e.Published, e.Built)
}

// DuplicateError is returned when two build records describe the same
// package version and build with different content.
type DuplicateError struct {
	Package, Version string
	Build            int
	First, Second    string // where each record came from
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("%s %s build %d is built twice with different content (%s and %s); remove the stale record or give the recipe a new build number",
		e.Package, e.Version, e.Build, e.First, e.Second)
}
