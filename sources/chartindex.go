package sources

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"

	"kbuild.dev/kbuild/internal/yamlbound"
)

// maxIndexLine bounds one line of a chart repository index in the
// streaming reader; a longer line makes it fall back to the full parse.
const maxIndexLine = 1 << 20

// errNotBlock makes lookupChart fall back to parsing the whole document.
var errNotBlock = errors.New("not in the block layout helm repo index writes")

// lookupChart returns the versions that the Helm repository index in r
// lists for chart name, and how many charts it lists.
//
// It reads in time linear in the size of the index and keeps only the one
// chart's entries: indexes written by `helm repo index` (and every tool
// that follows its block layout) are read line by line, the lines of the
// wanted chart are collected and only they are decoded. Any other layout
// (flow style, JSON, anchors used across charts) is parsed whole, still in
// linear time: the chart names are looked up in a map, never compared
// pairwise as the YAML library's duplicate-key check does. Aliases are
// bounded by yamlbound either way.
func lookupChart(r io.ReadSeeker, name string) ([]chartVersion, int, error) {
	block, charts, err := scanChartBlock(bufio.NewReaderSize(r, 64<<10), name)
	switch {
	case err == nil && block == nil:
		return nil, charts, nil
	case err == nil:
		if versions, err := decodeChartBlock(block); err == nil {
			return versions, charts, nil
		}
		// Anchors from elsewhere, or a form the block reader misjudged:
		// the full parse decides.
	case !errors.Is(err, errNotBlock):
		return nil, 0, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	return lookupChartFull(data, name)
}

// indent returns the number of leading spaces of line and whether the
// line carries no content (blank or a comment).
func indent(line []byte) (int, bool) {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	rest := bytes.TrimRight(line[n:], " \r\n")
	return n, len(rest) == 0 || rest[0] == '#'
}

// blockKey returns the plain key of a "key:" or "key: value" line at
// column 0 of trimmed, or ok false when the line is not that simple.
func blockKey(trimmed []byte) (key string, rest []byte, ok bool) {
	i := bytes.Index(trimmed, []byte(":"))
	if i <= 0 {
		return "", nil, false
	}
	k := trimmed[:i]
	rest = bytes.TrimSpace(trimmed[i+1:])
	if i+1 < len(trimmed) && trimmed[i+1] != ' ' && trimmed[i+1] != '\r' && trimmed[i+1] != '\n' {
		return "", nil, false
	}
	if bytes.ContainsAny(k, "{}[]&*!|>'\"%@`#?, \t") || k[0] == '-' {
		return "", nil, false
	}
	return string(k), rest, true
}

// scanChartBlock reads an index in helm's block layout and returns the
// lines of the wanted chart (nil if it is not listed) and the number of
// charts. It returns errNotBlock (or a read error) when the layout is not
// the one it understands.
func scanChartBlock(br *bufio.Reader, name string) ([]byte, int, error) {
	var (
		inEntries, sawEntries, capturing bool
		childIndent                      = -1
		block                            []byte
		seen                             = map[string]int{}
		lineNo                           int
	)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: accumulate it up to maxIndexLine.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxIndexLine {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			if len(long) > maxIndexLine {
				return nil, 0, errNotBlock
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		if len(line) == 0 && err == io.EOF {
			break
		}
		lineNo++
		if lineNo == 1 && bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
			return nil, 0, errNotBlock
		}
		n, empty := indent(line)
		if empty {
			if capturing {
				block = append(block, line...)
			}
		} else if bytes.IndexByte(line[:n], '\t') >= 0 || (n < len(line) && line[n] == '\t') {
			return nil, 0, errNotBlock
		} else if n == 0 {
			trimmed := bytes.TrimRight(line, "\r\n")
			if bytes.Equal(trimmed, []byte("---")) && !sawEntries {
				continue
			}
			key, rest, ok := blockKey(trimmed)
			if !ok {
				return nil, 0, errNotBlock
			}
			capturing, inEntries = false, false
			if key == "entries" {
				if sawEntries {
					return nil, 0, fmt.Errorf("line %d: duplicate key \"entries\": %w", lineNo, ErrUnsafe)
				}
				if len(rest) > 0 && rest[0] != '#' {
					return nil, 0, errNotBlock // entries: {} or a flow mapping
				}
				inEntries, sawEntries = true, true
			}
		} else if inEntries {
			if childIndent < 0 {
				childIndent = n
			}
			switch {
			case n < childIndent:
				return nil, 0, errNotBlock
			case n == childIndent && line[n] != '-':
				key, _, ok := blockKey(bytes.TrimRight(line[n:], "\r\n"))
				if !ok {
					return nil, 0, errNotBlock
				}
				if first, dup := seen[key]; dup {
					return nil, 0, fmt.Errorf("line %d: chart %s listed twice (first on line %d): %w", lineNo, quoteName(key), first, ErrUnsafe)
				}
				seen[key] = lineNo
				capturing = key == name
				if capturing {
					block = append(block[:0], line...)
					continue
				}
			}
			if capturing {
				block = append(block, line...)
			}
		}
		if err == io.EOF {
			break
		}
	}
	if !sawEntries {
		return nil, 0, errors.New("no entries: this is not a Helm chart repository index")
	}
	if _, ok := seen[name]; !ok {
		return nil, len(seen), nil
	}
	return block, len(seen), nil
}

// decodeChartBlock decodes "NAME:\n  - …" lines into the chart's versions.
func decodeChartBlock(block []byte) ([]chartVersion, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(block, &doc); err != nil {
		return nil, err
	}
	if err := yamlbound.Check(&doc, len(block)); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrUnsafe)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode || len(doc.Content[0].Content) != 2 {
		return nil, errNotBlock
	}
	var versions []chartVersion
	if err := doc.Content[0].Content[1].Decode(&versions); err != nil {
		return nil, err
	}
	return versions, nil
}

// lookupChartFull parses a whole index and looks name up in its entries
// mapping, checking for duplicate names with a map.
func lookupChartFull(data []byte, name string) ([]chartVersion, int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, 0, err
	}
	if err := yamlbound.Check(&doc, len(data)); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", err, ErrUnsafe)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, 0, errors.New("not a Helm chart repository index (expected a YAML mapping with entries)")
	}
	var entries *yaml.Node
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "entries" {
			if entries != nil {
				return nil, 0, fmt.Errorf("line %d: duplicate key \"entries\": %w", root.Content[i].Line, ErrUnsafe)
			}
			entries = root.Content[i+1]
		}
	}
	if entries != nil && entries.Kind == yaml.AliasNode {
		entries = entries.Alias
	}
	if entries == nil || entries.Kind != yaml.MappingNode {
		return nil, 0, errors.New("no entries: this is not a Helm chart repository index")
	}
	seen := make(map[string]int, len(entries.Content)/2)
	var found *yaml.Node
	for i := 0; i+1 < len(entries.Content); i += 2 {
		k := entries.Content[i]
		if first, dup := seen[k.Value]; dup {
			return nil, 0, fmt.Errorf("line %d: chart %s listed twice (first on line %d): %w", k.Line, quoteName(k.Value), first, ErrUnsafe)
		}
		seen[k.Value] = k.Line
		if k.Value == name {
			found = entries.Content[i+1]
		}
	}
	if found == nil {
		return nil, len(seen), nil
	}
	var versions []chartVersion
	if err := found.Decode(&versions); err != nil {
		return nil, 0, fmt.Errorf("chart %s: %w", quoteName(name), err)
	}
	return versions, len(seen), nil
}
