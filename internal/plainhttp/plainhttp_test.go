package plainhttp

import "testing"

func TestAllows(t *testing.T) {
	for _, tc := range []struct {
		p        Policy
		registry string
		want     bool
	}{
		{Policy{Loopback: true}, "127.0.0.1:5000", true},
		{Policy{Loopback: true}, "localhost:5000", true},
		{Policy{Loopback: true}, "[::1]:5000", true},
		{Policy{Loopback: true}, "localhost", true},
		{Policy{Loopback: true}, "index.docker.io", false},
		{Policy{Loopback: true}, "quay.io", false},
		{Policy{Loopback: true}, "10.0.0.8:5000", false},
		{Policy{}, "127.0.0.1:5000", false},
		{Policy{Hosts: []string{"registry.lan:5000"}}, "registry.lan:5000", true},
		{Policy{Loopback: true, Hosts: []string{"registry.lan:5000"}}, "registry.lan", false},
	} {
		if got := tc.p.Allows(tc.registry); got != tc.want {
			t.Errorf("%+v.Allows(%s) = %v, want %v", tc.p, tc.registry, got, tc.want)
		}
	}
}
