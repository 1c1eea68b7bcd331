package patches

import (
	"errors"
	"testing"

	"kbuild.dev/kbuild/recipe"
)

func TestExclude(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sel     []recipe.Selector
		want    string // names of the kept objects
		wantErr string
		noMatch bool // the error wraps ErrNoMatch
	}{
		{name: "none", want: "Namespace/app ServiceAccount/app Deployment/web Deployment/worker Service/web"},
		{name: "kind", sel: []recipe.Selector{{Kind: "Namespace"}},
			want: "ServiceAccount/app Deployment/web Deployment/worker Service/web"},
		{name: "name across kinds", sel: []recipe.Selector{{Name: "web"}},
			want: "Namespace/app ServiceAccount/app Deployment/worker"},
		{name: "kind and name", sel: []recipe.Selector{{Kind: "Deployment", Name: "web"}, {Kind: "Namespace", Name: "app"}},
			want: "ServiceAccount/app Deployment/worker Service/web"},
		{name: "overlapping entries both used", sel: []recipe.Selector{{Kind: "Deployment"}, {Name: "worker"}},
			want: "Namespace/app ServiceAccount/app Service/web"},
		{name: "empty entry", sel: []recipe.Selector{{Kind: "Namespace"}, {}},
			wantErr: "exclude[1]: neither kind nor name is set"},
		{name: "typo in name", sel: []recipe.Selector{{Kind: "Deployment", Name: "wbe"}}, noMatch: true,
			wantErr: "exclude[0] {kind: Deployment, name: wbe}: matches no object; Deployment objects present: web, worker"},
		{name: "typo in kind", sel: []recipe.Selector{{Kind: "Namspace"}}, noMatch: true,
			wantErr: "exclude[0] {kind: Namspace}: matches no object; no Namspace object exists; kinds present: Deployment, Namespace, Service, ServiceAccount"},
		{name: "unknown name", sel: []recipe.Selector{{Kind: "Service"}, {Name: "db"}}, noMatch: true,
			wantErr: "exclude[1] {name: db}: matches no object; objects present: Deployment/web, Deployment/worker, Namespace/app, Service/web, ServiceAccount/app"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := splitFile(t, "testdata/objects.yaml")
			got, err := Exclude(objs, tc.sel)
			if errMatch(t, err, tc.wantErr) {
				if errors.Is(err, ErrNoMatch) != tc.noMatch {
					t.Errorf("errors.Is(%v, ErrNoMatch) = %v, want %v", err, !tc.noMatch, tc.noMatch)
				}
				return
			}
			if g := names(got); g != tc.want {
				t.Errorf("Exclude(%v) = %s, want %s", tc.sel, g, tc.want)
			}
			if len(objs) != 5 {
				t.Errorf("Exclude changed its input: %d objects left", len(objs))
			}
		})
	}
}

// names lists objects as KIND/NAME.
func names(objs []*Object) string {
	s := ""
	for i, o := range objs {
		if i > 0 {
			s += " "
		}
		s += o.Kind() + "/" + o.Name()
	}
	return s
}
