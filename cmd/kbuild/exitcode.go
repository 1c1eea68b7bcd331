package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"kbuild.dev/kbuild/internal/fault"
)

// kbuild's exit statuses, the same in every command (README "Exit
// status", and the end of every --help), so that CI can tell a refusal
// it must not retry from a network failure it should.
const (
	exitOK = 0
	// exitFailed: what the command checks or builds failed (validate
	// found problems, a rebuild differs, a build failed), or another
	// error.
	exitFailed = 1
	// exitUsage: wrong flags or arguments; nothing was done.
	exitUsage = 2
	// exitRefused: input kbuild refuses — unsafe or oversized archives and
	// YAML, a recipe with errors, a render over its budget, a published
	// version built again with other content, refused evidence or
	// promotion, a bad bundle.
	exitRefused = 3
	// exitVerification: a signature, digest, expiry or root-chain check
	// failed (an index, a root, provenance, a pinned source).
	exitVerification = 4
	// exitUnavailable: the network or a registry or site is unavailable —
	// refused or reset connections, DNS, timeouts and stalls, HTTP 5xx or
	// 429. Retrying later may succeed.
	exitUnavailable = 5
	// exitOutdated: kbuild outdated checked every recipe and at least one
	// has a newer allowed upstream version; not a failure, but work.
	exitOutdated = 6
)

// exitStatusHelp ends every command's --help.
const exitStatusHelp = `Exit status:
  0 success · 1 failed (see the output) · 2 usage error · 3 input refused
  4 verification failed (signature, digest, expiry) · 5 network or registry
  unavailable (retry later) · 6 outdated (kbuild outdated only)`

// exitCode is the exit status for err, returned by a command's Run.
func exitCode(err error) int {
	var (
		ue  *usageError
		ee  *exitError
		te  *transport.Error
		oe  *net.OpError
		de  *net.DNSError
		ue2 *url.Error
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ee):
		return ee.Code
	case fault.Is(err, fault.Verification):
		return exitVerification
	case fault.Is(err, fault.Refused):
		return exitRefused
	case fault.Is(err, fault.Unavailable), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH), errors.Is(err, context.DeadlineExceeded):
		return exitUnavailable
	case errors.As(err, &te) && (te.StatusCode >= 500 || te.StatusCode == http.StatusTooManyRequests):
		return exitUnavailable
	case errors.As(err, &oe) && oe.Op != "listen", errors.As(err, &de), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ue2) && ue2.Timeout():
		return exitUnavailable
	}
	return exitFailed
}

// sharedExitCode is the exit status of a command several of whose recipes
// failed: the status they all share (5 when every one failed for the
// network, so CI retries), else 1.
func sharedExitCode(errs []error) int {
	code := exitFailed
	for i, err := range errs {
		c := exitCode(err)
		if i > 0 && c != code {
			return exitFailed
		}
		code = c
	}
	return code
}
