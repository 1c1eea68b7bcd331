package recipe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"kbuild.dev/kbuild/internal/yamlbound"
)

// Positions maps a field path such as "spec.sources.upstream.sha256" to the
// line it was written on.
type Positions map[string]int

// Line returns the line of field, or of its nearest written parent, or 0.
func (p Positions) Line(field string) int {
	for field != "" {
		if l, ok := p[field]; ok {
			return l
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			break
		}
		field = field[:i]
	}
	return 0
}

// Parse decodes a recipe strictly. Unknown fields, duplicate keys and values
// of the wrong type are reported with their line; file names the recipe in
// messages. Problems in the returned error are of type *Problems.
//
// Aliases are followed, but a recipe whose aliases expand it far beyond its
// own size (a "billion laughs" bomb) is refused before anything walks it,
// with an error wrapping yamlbound.ErrExpansion.
func Parse(file string, data []byte) (*Recipe, Positions, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if err := yamlbound.Check(&doc, len(data)); err != nil {
		return nil, nil, fmt.Errorf("%s: %w; write the values out instead of repeating anchors", file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil, fmt.Errorf("%s: empty file; a recipe starts with apiVersion: %s and kind: %s", file, APIVersion, Kind)
	}
	pos := Positions{}
	var probs Problems
	walk(doc.Content[0], reflect.TypeOf(Recipe{}), "", pos, &probs)
	if len(probs) > 0 {
		return nil, pos, &ProblemsError{File: file, Problems: probs}
	}
	js, err := sigsyaml.YAMLToJSON(data)
	if err != nil {
		return nil, pos, fmt.Errorf("%s: %w", file, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var r Recipe
	if err := dec.Decode(&r); err != nil {
		return nil, pos, fmt.Errorf("%s: %w", file, err)
	}
	normalizeCommits(&r)
	return &r, pos, nil
}

// normalizeCommits writes git commit ids in lower case, as git prints them:
// git accepts either, and the cache and build records must not see the same
// commit under two names.
func normalizeCommits(r *Recipe) {
	for n, s := range r.Spec.Sources {
		if s.Git != nil {
			g := *s.Git
			g.Commit = strings.ToLower(g.Commit)
			s.Git = &g
			r.Spec.Sources[n] = s
		}
	}
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// walk checks node against the shape of t, recording positions and problems.
func walk(node *yaml.Node, t reflect.Type, path string, pos Positions, probs *Problems) {
	if node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	if path != "" {
		if _, seen := pos[path]; !seen {
			pos[path] = node.Line
		}
	}
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || t.Kind() == reflect.Interface {
		return
	}
	bad := func(want string) {
		probs.add(Problem{Field: path, Line: node.Line, Message: fmt.Sprintf("expected %s, got %s", want, describe(node))})
	}
	switch t.Kind() {
	case reflect.Struct:
		if node.Kind != yaml.MappingNode {
			bad("a mapping")
			return
		}
		fields := map[string]reflect.Type{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields[name] = f.Type
			names = append(names, name)
		}
		eachPair(node, path, probs, func(key, value *yaml.Node) {
			ft, ok := fields[key.Value]
			child := join(path, key.Value)
			if !ok {
				msg := fmt.Sprintf("unknown field %s", Quote(key.Value))
				if s := closest(key.Value, names); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				}
				probs.add(Problem{Field: child, Line: key.Line, Message: msg})
				return
			}
			pos[child] = key.Line
			walk(value, ft, child, pos, probs)
		})
	case reflect.Map:
		if node.Kind != yaml.MappingNode {
			bad("a mapping")
			return
		}
		eachPair(node, path, probs, func(key, value *yaml.Node) {
			child := join(path, key.Value)
			pos[child] = key.Line
			walk(value, t.Elem(), child, pos, probs)
		})
	case reflect.Slice:
		if node.Kind != yaml.SequenceNode {
			bad("a list")
			return
		}
		for i, item := range node.Content {
			walk(item, t.Elem(), path+"["+strconv.Itoa(i)+"]", pos, probs)
		}
	case reflect.String:
		if node.Kind != yaml.ScalarNode {
			bad("a string")
		} else if node.Tag != "!!str" && node.Style == 0 {
			probs.add(Problem{Field: path, Line: node.Line, Message: fmt.Sprintf("expected a string, got %s; quote it: %s", describe(node), Quote(node.Value))})
		}
	case reflect.Int:
		if node.Kind != yaml.ScalarNode || node.Tag != "!!int" {
			bad("a whole number")
		}
	case reflect.Bool:
		if node.Kind != yaml.ScalarNode || node.Tag != "!!bool" {
			bad("true or false")
		}
	}
}

// eachPair calls fn for each key/value of a mapping, reporting duplicate keys.
func eachPair(node *yaml.Node, path string, probs *Problems, fn func(key, value *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		if first, dup := seen[key.Value]; dup {
			probs.add(Problem{Field: join(path, key.Value), Line: key.Line, Message: fmt.Sprintf("duplicate key %s (first on line %d)", Quote(key.Value), first)})
			continue
		}
		seen[key.Value] = key.Line
		fn(key, value)
	}
}

// join adds key to a field path, cut by cut when it is longer than a name.
func join(path, key string) string {
	key = cut(key)
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	}
	return Quote(n.Value)
}

// closest returns the known name nearest to s by edit distance, if close.
func closest(s string, names []string) string {
	best, bestD := "", 3
	sort.Strings(names)
	for _, n := range names {
		if d := distance(strings.ToLower(s), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
