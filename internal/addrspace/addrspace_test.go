package addrspace

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	const mib = 1 << 20
	c := Cost{PerByte: 2, Fixed: 10 * mib, Use: "reading a thing"}
	capped := Room{Limited: true, Limit: 1024 * mib, Mapped: 760 * mib} // 264 MiB free: 127 MiB fit
	for _, tc := range []struct {
		name string
		room Room
		size int64
		want string // "" fits
	}{
		{"no limit, any size", Room{}, 1 << 40, ""},
		{"unknown size", capped, -1, ""},
		{"fits", capped, 127 * mib, ""},
		{"one byte over", capped, 127*mib + 1, "133169153 bytes, more than the 127 MiB that fit"},
		{"far over", capped, 1 << 30, "reading a thing takes about 2 bytes of memory per byte of input plus 10 MiB, 2058 MiB here, and the limit (ulimit -v) is 1024 MiB of which 760 MiB are mapped already; raise it to at least 2818 MiB"},
		{"mapped past the limit", Room{Limited: true, Limit: 100 * mib, Mapped: 200 * mib}, 1, "more than the 0 MiB that fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.room.Check(tc.size, c)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check(%d) = %v, want nil", tc.size, err)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check(%d) = %v, want ErrTooLarge saying %q", tc.size, err, tc.want)
			}
		})
	}
	if got, ok := capped.MaxSize(c); !ok || got != 127*mib {
		t.Errorf("MaxSize = %d, %v, want %d, true", got, ok, 127*mib)
	}
	if _, ok := (Room{}).MaxSize(c); ok {
		t.Error("MaxSize without a limit says there is one")
	}
}

// TestNow: the running test has no address-space limit, or one above what
// it has mapped.
func TestNow(t *testing.T) {
	r := Now()
	if r.Limited && (r.Mapped <= 0 || r.Limit <= 0) {
		t.Fatalf("Now() = %+v", r)
	}
}
