package netdeadline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"kbuild.dev/kbuild/internal/fault"
)

// DefaultIdle is the idle timeout kbuild uses unless --timeout says
// otherwise.
//
// 20 seconds: CI jobs and test harnesses commonly give a step 30 s, and a
// stall must fail with kbuild's own message (which names the URL and what
// to do) before the caller kills it.
const DefaultIdle = 20 * time.Second

// minRate is the average rate, in bytes per second, a transfer must keep
// once its idle timeout has passed (a variable for tests).
var minRate int64 = 1 << 20

// ErrStalled is wrapped by the error of a transfer that made no progress
// for the idle timeout or ran past its budget.
var ErrStalled = fault.New(fault.Unavailable, "transfer stalled")

// Budget returns how long a transfer of size bytes may take under the idle
// timeout idle: idle, plus one second per MiB. The minimum-rate check so
// starts when the idle timeout (--timeout) has passed, not after a fixed
// minute: a server that drips one byte every few seconds, never silent for
// idle, is cut off soon after idle.
func Budget(idle time.Duration, size int64) time.Duration {
	return idle + time.Duration(size*int64(time.Second)/minRate)
}

// Option configures Transport.
type Option func(*transport)

// WithProgress makes the transport report, through logf, a body that has
// sent nothing for half the idle timeout: what is waited on, for how long
// and how much arrived. The default reports nothing.
func WithProgress(logf func(format string, args ...any)) Option {
	return func(t *transport) { t.logf = logf }
}

// Transport returns base with deadlines: idle bounds connecting, the TLS
// handshake, the wait for response headers and every gap in the body; the
// whole body is bounded by Budget. A nil base means
// http.DefaultTransport. When base is an *http.Transport it is cloned with
// its dial, handshake and header timeouts set to idle.
func Transport(base http.RoundTripper, idle time.Duration, opts ...Option) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if t, ok := base.(*http.Transport); ok {
		t = t.Clone()
		t.DialContext = (&net.Dialer{Timeout: idle, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = idle
		t.ResponseHeaderTimeout = idle
		base = t
	}
	t := &transport{base: base, idle: idle}
	for _, o := range opts {
		o(t)
	}
	return t
}

type transport struct {
	base http.RoundTripper
	idle time.Duration
	logf func(format string, args ...any)
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	what := req.Method + " " + req.URL.Redacted()
	// An upload's body is watched as a download's is: a server that stops
	// taking it blocks the transport in a write that no header timeout
	// covers, so a quiet upload cancels the request.
	var up *upload
	cancel := func() {}
	if req.Body != nil && req.Body != http.NoBody {
		var ctx context.Context
		ctx, cancel = context.WithCancel(req.Context())
		req = req.Clone(ctx)
		up = newUpload(req.Body, what, t.idle, req.ContentLength, cancel)
		req.Body = up
		if get := req.GetBody; get != nil {
			req.GetBody = func() (io.ReadCloser, error) {
				rc, err := get()
				if err != nil {
					return nil, err
				}
				return up.again(rc), nil
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if up != nil {
		if stall := up.stop(); stall != nil && err != nil {
			cancel()
			return nil, stall
		}
	}
	if err != nil {
		cancel()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("no response within %s: %w (%w)", t.idle, ErrStalled, err)
		}
		return nil, err
	}
	if resp.Body != nil && resp.Body != http.NoBody {
		b := watch(resp.Body, what, t.idle, resp.ContentLength, t.logf)
		b.release = cancel
		resp.Body = b
	} else {
		cancel()
	}
	return resp, nil
}

// upload is a request body under a watchdog: when the transport takes no
// byte of it for the idle timeout, or it runs past its budget, the
// request is cancelled.
type upload struct {
	what   string
	idle   time.Duration
	size   int64 // announced, or -1
	start  time.Time
	last   time.Time // of the last byte taken
	cancel func()

	mu      sync.Mutex
	rc      io.ReadCloser
	n       int64
	stall   error
	stopped bool
	timer   *time.Timer
}

func newUpload(rc io.ReadCloser, what string, idle time.Duration, size int64, cancel func()) *upload {
	u := &upload{rc: rc, what: what, idle: idle, size: size, start: time.Now(), cancel: cancel}
	u.last = u.start
	u.timer = time.AfterFunc(idle, u.fire)
	return u
}

// again watches rc, the body the transport reads again for a retry.
func (u *upload) again(rc io.ReadCloser) io.ReadCloser {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.rc, u.n = rc, 0
	if !u.stopped {
		u.timer.Reset(u.idle)
	}
	return u
}

func (u *upload) fire() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped || u.stall != nil {
		return
	}
	size := u.size
	if size < 0 {
		size = u.n
	}
	if now := time.Now(); now.Sub(u.last) >= u.idle || now.Before(u.start.Add(Budget(u.idle, size))) {
		u.stall = fmt.Errorf("%s: the server took no data for %s after %d bytes: %w; it stopped reading the upload", u.what, u.idle, u.n, ErrStalled)
	} else {
		u.stall = fmt.Errorf("%s: %d bytes sent in %s, slower than the %d KiB/s allowed on average: %w", u.what, u.n, now.Sub(u.start).Round(time.Second), minRate>>10, ErrStalled)
	}
	u.cancel()
}

// stop ends the watch (the response arrived or the request failed) and
// returns the stall that cancelled the request, if one did.
func (u *upload) stop() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.stopped = true
	u.timer.Stop()
	return u.stall
}

func (u *upload) Read(p []byte) (int, error) {
	u.mu.Lock()
	rc := u.rc
	u.mu.Unlock()
	n, err := rc.Read(p)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stall != nil {
		return 0, u.stall
	}
	u.n += int64(n)
	if n > 0 {
		u.last = time.Now()
	}
	if err != nil {
		u.timer.Stop() // all of it is sent: the header timeout takes over
	} else if n > 0 && !u.stopped {
		size := u.size
		if size < 0 {
			size = u.n
		}
		// The next byte must come within idle, and before the budget ends.
		u.timer.Reset(max(min(u.idle, time.Until(u.start.Add(Budget(u.idle, size)))), time.Millisecond))
	}
	return n, err
}

func (u *upload) Close() error {
	u.mu.Lock()
	rc := u.rc
	u.mu.Unlock()
	return rc.Close()
}

// body is a response body under a watchdog.
type body struct {
	rc    io.ReadCloser
	what  string
	idle  time.Duration
	size  int64 // announced, or -1
	start time.Time

	mu     sync.Mutex
	last   time.Time // of the last byte received
	n      int64
	err    error
	timer  *time.Timer
	closed bool
	// notice reports a body quiet for half the idle timeout, when set.
	notice *time.Timer
	// release ends the request's context once the body is closed.
	release func()
}

func watch(rc io.ReadCloser, what string, idle time.Duration, size int64, logf func(string, ...any)) *body {
	b := &body{rc: rc, what: what, idle: idle, size: size, start: time.Now()}
	b.last = b.start
	b.timer = time.AfterFunc(idle, b.fire)
	if logf != nil {
		b.notice = time.AfterFunc(idle/2, func() {
			b.mu.Lock()
			n, closed := b.n, b.closed
			b.mu.Unlock()
			if !closed {
				logf("waiting on %s: nothing received for %s (%d bytes so far; giving up after %s)", what, idle/2, n, idle)
			}
		})
	}
	return b
}

// deadline is when the body's budget runs out.
func (b *body) deadline() time.Time {
	size := b.size
	if size < 0 {
		size = b.n
	}
	return b.start.Add(Budget(b.idle, size))
}

// fire ends the body: no byte for the idle timeout, or past the budget.
func (b *body) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.err != nil {
		return
	}
	now := time.Now()
	if now.Sub(b.last) >= b.idle || now.Before(b.deadline()) {
		b.err = fmt.Errorf("%s: no data for %s after %d bytes: %w; the server stopped sending", b.what, b.idle, b.n, ErrStalled)
	} else {
		b.err = fmt.Errorf("%s: %d bytes in %s, slower than the %d KiB/s allowed on average: %w", b.what, b.n, now.Sub(b.start).Round(time.Second), minRate>>10, ErrStalled)
	}
	b.rc.Close() // unblocks a Read in progress
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	b.n += int64(n)
	if n > 0 {
		b.last = time.Now()
	}
	if err == nil && n > 0 {
		wait := min(b.idle, time.Until(b.deadline()))
		if wait <= 0 {
			b.mu.Unlock()
			b.fire()
			b.mu.Lock()
			return 0, b.err
		}
		b.timer.Reset(wait)
		if b.notice != nil {
			b.notice.Reset(b.idle / 2)
		}
	}
	return n, err
}

func (b *body) Close() error {
	b.mu.Lock()
	b.closed = true
	b.timer.Stop()
	if b.notice != nil {
		b.notice.Stop()
	}
	b.mu.Unlock()
	err := b.rc.Close()
	if b.release != nil {
		b.release()
	}
	return err
}
