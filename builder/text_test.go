package builder

import (
	"bytes"
	"testing"
)

// TestPlanText: one recipe a line and the count on notes; JSON on one
// line with empty lists as [].
func TestPlanText(t *testing.T) {
	p := &Plan{Shards: []Shard{{Index: 1, Recipes: []string{"recipes/a", "recipes/c"}}, {Index: 2, Recipes: []string{"recipes/b"}}}, UpToDate: []string{"recipes/d"}}
	var w, notes bytes.Buffer
	if err := p.WriteText(&w, &notes); err != nil {
		t.Fatal(err)
	}
	if want := "shard 1: recipes/a\nshard 1: recipes/c\nshard 2: recipes/b\nup to date: recipes/d\n"; w.String() != want {
		t.Errorf("WriteText = %q, want %q", w.String(), want)
	}
	if want := "3 to build in 2 shards, 1 up to date\n"; notes.String() != want {
		t.Errorf("notes = %q, want %q", notes.String(), want)
	}
	w.Reset()
	if err := (&Plan{Shards: []Shard{}, UpToDate: []string{}}).WriteJSON(&w, &notes); err != nil {
		t.Fatal(err)
	}
	if want := `{"shards":[],"upToDate":[]}` + "\n"; w.String() != want {
		t.Errorf("WriteJSON = %q, want %q", w.String(), want)
	}
}
