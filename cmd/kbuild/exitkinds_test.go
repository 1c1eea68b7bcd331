package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"kbuild.dev/kbuild/builder"
	"kbuild.dev/kbuild/builder/render"
	"kbuild.dev/kbuild/bundle"
	"kbuild.dev/kbuild/evidence"
	"kbuild.dev/kbuild/internal/addrspace"
	"kbuild.dev/kbuild/internal/netdeadline"
	"kbuild.dev/kbuild/internal/yamlbound"
	"kbuild.dev/kbuild/provenance"
	"kbuild.dev/kbuild/qualify"
	"kbuild.dev/kbuild/recipe"
	"kbuild.dev/kbuild/releaseset"
	"kbuild.dev/kbuild/review"
	"kbuild.dev/kbuild/siteread"
	"kbuild.dev/kbuild/sources"
	"kbuild.dev/kbuild/suite"
	"kbuild.dev/kbuild/trust"
)

// TestExitCodeKinds holds every error the libraries declare a kind of
// failure for (internal/fault) to the exit status the README documents,
// wrapped as a command returns it: a sentinel declared with errors.New
// instead of fault.New would end a command with 1.
func TestExitCodeKinds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{&trust.VerificationError{}, exitVerification},
		{&sources.DigestMismatchError{}, exitVerification},
		{provenance.ErrVerify, exitVerification},
		{siteread.ErrUnverified, exitVerification},
		{&recipe.ProblemsError{}, exitRefused},
		{sources.ErrUnsafe, exitRefused},
		{sources.ErrTooLarge, exitRefused},
		{trust.ErrTooLarge, exitRefused},
		{addrspace.ErrTooLarge, exitRefused},
		{yamlbound.ErrExpansion, exitRefused},
		{render.ErrBudget, exitRefused},
		{builder.ErrImmutable, exitRefused},
		{builder.ErrNotAdoptable, exitRefused},
		{releaseset.ErrInvalid, exitRefused},
		{evidence.ErrRefused, exitRefused},
		{suite.ErrRefused, exitRefused},
		{bundle.ErrBadBundle, exitRefused},
		{review.ErrOtherKbuild, exitRefused},
		{netdeadline.ErrStalled, exitUnavailable},
		{sources.ErrUnavailable, exitUnavailable},
		{siteread.ErrUnavailable, exitUnavailable},
		{qualify.ErrCluster, exitUnavailable},
		{context.DeadlineExceeded, exitUnavailable},
		{errors.New("anything else"), exitFailed},
		// A verification failure outranks the refusal it is joined with.
		{errors.Join(sources.ErrUnsafe, &trust.VerificationError{}), exitVerification},
	} {
		err := fmt.Errorf("kbuild x: %w", tc.err)
		if got := exitCode(err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", err, got, tc.want)
		}
	}
}
