package builder

import (
	"reflect"
	"testing"
)

func TestPlanShards(t *testing.T) {
	tests := []struct {
		name   string
		build  []string
		n      int
		shards [][]string
	}{
		{name: "nothing to build", build: nil, n: 3, shards: [][]string{}},
		{name: "one shard", build: []string{"a", "b", "c"}, n: 1, shards: [][]string{{"a", "b", "c"}}},
		{name: "round robin", build: []string{"a", "b", "c", "d", "e"}, n: 2, shards: [][]string{{"a", "c", "e"}, {"b", "d"}}},
		{name: "fewer recipes than shards", build: []string{"a", "b"}, n: 4, shards: [][]string{{"a"}, {"b"}}},
		{name: "as many as shards", build: []string{"a", "b", "c"}, n: 3, shards: [][]string{{"a"}, {"b"}, {"c"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := planShards(tc.build, []string{"x"}, tc.n)
			got := [][]string{}
			for i, s := range p.Shards {
				if s.Index != i {
					t.Errorf("shard %d has index %d", i, s.Index)
				}
				got = append(got, s.Recipes)
			}
			if !reflect.DeepEqual(got, tc.shards) {
				t.Errorf("planShards(%v, %d) = %v, want %v", tc.build, tc.n, got, tc.shards)
			}
			if !reflect.DeepEqual(p.UpToDate, []string{"x"}) {
				t.Errorf("upToDate = %v", p.UpToDate)
			}
		})
	}
}
