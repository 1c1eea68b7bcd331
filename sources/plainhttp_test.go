package sources

import "testing"

func TestPlainHTTP(t *testing.T) {
	for _, tc := range []struct {
		plain    bool
		hosts    []string
		registry string
		want     bool
	}{
		{true, nil, "127.0.0.1:5000", true},
		{true, nil, "localhost:5000", true},
		{true, nil, "[::1]:5000", true},
		{true, nil, "localhost", true},
		{true, nil, "index.docker.io", false},
		{true, nil, "quay.io", false},
		{true, nil, "10.0.0.8:5000", false},
		{false, nil, "127.0.0.1:5000", false},
		{false, []string{"registry.lan:5000"}, "registry.lan:5000", true},
		{true, []string{"registry.lan:5000"}, "registry.lan", false},
	} {
		f, err := New(WithPlainHTTP(tc.plain), WithPlainHTTPHosts(tc.hosts...), WithCacheDir(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.PlainHTTP(tc.registry); got != tc.want {
			t.Errorf("PlainHTTP(%s) with --plain-http=%v hosts %q = %v, want %v", tc.registry, tc.plain, tc.hosts, got, tc.want)
		}
	}
}
