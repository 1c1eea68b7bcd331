package review

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"
)

// transition describes base → head for a heading.
func (r *Report) transition(arrow string) string {
	switch {
	case r.Base == nil && r.Head == nil:
		return "nothing to compare"
	case r.Base == nil:
		return "new package, " + r.Head.String()
	case r.Head == nil:
		return "removed, was " + r.Base.String()
	case r.SameRelease():
		return r.Head.String() + " (same version and build)"
	}
	return r.Base.String() + " " + arrow + " " + r.Head.String()
}

// summaryRow is one line of the summary of spec changes.
type summaryRow struct {
	what          string
	before, after string
}

// summary lists the changes of charts, images, CRDs, requirements,
// provided names, conflicts, rollback and permissions in a fixed order.
func (r *Report) summary() []summaryRow {
	var rows []summaryRow
	for _, c := range r.Charts {
		rows = append(rows, summaryRow{"chart " + c.Name, c.BaseDigest, c.HeadDigest})
	}
	set := func(what string, s SetChange) {
		for _, x := range s.Removed {
			rows = append(rows, summaryRow{what, x, ""})
		}
		for _, x := range s.Added {
			rows = append(rows, summaryRow{what, "", x})
		}
	}
	set("image", r.Images)
	set("CRD", r.CRDs)
	for _, q := range r.Requires {
		what := "requires"
		if q.Variant != "" {
			what += " (variant " + q.Variant + ")"
		}
		before, after := q.Before, q.After
		if before != "" {
			before = q.Target + " " + before
		}
		if after != "" {
			after = q.Target + " " + after
		}
		rows = append(rows, summaryRow{what, before, after})
	}
	set("provides", r.Provides)
	set("conflicts", r.Conflicts)
	if r.Rollback != nil {
		rows = append(rows, summaryRow{"rollback", r.Rollback.Before, r.Rollback.After})
	}
	if r.Permissions != nil {
		rows = append(rows, summaryRow{"permissions", orNone(r.Permissions.Before), orNone(r.Permissions.After)})
	}
	return rows
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// objectCounts returns "N added, N changed, N removed".
func (r *Report) objectCounts() string {
	n := map[Change]int{}
	for _, o := range r.Objects {
		n[o.Change]++
	}
	return fmt.Sprintf("%d added, %d changed, %d removed", n[Added], n[Changed], n[Removed])
}

// immutableNote is the warning for a release whose content changed.
func (r *Report) immutableNote() string {
	why := r.ImmutableViolation()
	if why == "" {
		return ""
	}
	return fmt.Sprintf("%s@%s is unchanged but its content differs (%s); if it is published, give the recipe a new build number", r.Package, r.Head, why)
}

// WriteText writes the report for a terminal: a heading line, the spec
// changes, then each changed object with its unified diff, in full.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s: %s\n", r.Package, r.transition("->"))
	if !r.Changed() && len(r.summary()) == 0 {
		fmt.Fprintf(bw, "  no changes\n")
		return bw.Flush()
	}
	if note := r.immutableNote(); note != "" {
		fmt.Fprintf(bw, "  warning: %s\n", note)
	}
	for _, row := range r.summary() {
		switch {
		case row.before == "":
			fmt.Fprintf(bw, "  %s: + %s\n", row.what, row.after)
		case row.after == "":
			fmt.Fprintf(bw, "  %s: - %s\n", row.what, row.before)
		default:
			fmt.Fprintf(bw, "  %s: %s -> %s\n", row.what, row.before, row.after)
		}
	}
	if r.SpecChanged && len(r.summary()) == 0 {
		fmt.Fprintf(bw, "  package spec: changed (components or install settings)\n")
	}
	fmt.Fprintf(bw, "  objects: %s\n", r.objectCounts())
	for _, o := range r.Objects {
		fmt.Fprintf(bw, "\n%s %s (chart %s)\n%s", o.Change, o.Title(), o.Chart, o.Diff)
	}
	return bw.Flush()
}

// MarkdownOption changes how WriteMarkdown bounds its output.
type MarkdownOption func(*markdownConfig)

type markdownConfig struct {
	maxObjectLines int
	maxLines       int
	command        string
}

// WithCommand names the command that prints the full diff in the notes
// about truncation (default "kbuild diff").
func WithCommand(cmd string) MarkdownOption { return func(c *markdownConfig) { c.command = cmd } }

// WriteMarkdown writes the report as GitHub-flavoured Markdown for a step
// summary or a pull request comment: a heading for the package, a table of
// the spec changes, then each changed object as a collapsed section with
// a fenced diff block. Diffs are truncated with a note past the limits.
func (r *Report) WriteMarkdown(w io.Writer, opts ...MarkdownOption) error {
	c := markdownConfig{maxObjectLines: 200, maxLines: 2000, command: "kbuild diff"}
	for _, o := range opts {
		o(&c)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "### %s: %s\n\n", mdText(r.Package), mdText(r.transition("→")))
	if !r.Changed() && len(r.summary()) == 0 {
		fmt.Fprintf(bw, "No changes.\n\n")
		return bw.Flush()
	}
	if note := r.immutableNote(); note != "" {
		fmt.Fprintf(bw, "> [!WARNING]\n> %s\n\n", mdText(note))
	}
	if rows := r.summary(); len(rows) > 0 {
		fmt.Fprintf(bw, "| Change | Before | After |\n|---|---|---|\n")
		for _, row := range rows {
			fmt.Fprintf(bw, "| %s | %s | %s |\n", mdText(row.what), mdCode(row.before), mdCode(row.after))
		}
		fmt.Fprintln(bw)
	} else if r.SpecChanged {
		fmt.Fprintf(bw, "The package spec changed (components or install settings).\n\n")
	}
	fmt.Fprintf(bw, "**Objects:** %s\n\n", r.objectCounts())
	shown := 0
	for _, o := range r.Objects {
		title := fmt.Sprintf("%s <code>%s</code> (chart %s)", o.Change, html.EscapeString(o.Title()), html.EscapeString(o.Chart))
		lines := splitLines(o.Diff)
		if shown >= c.maxLines {
			fmt.Fprintf(bw, "- %s: diff not shown, the summary is limited to %d diff lines; run `%s` for all of it\n", title, c.maxLines, c.command)
			continue
		}
		limit := min(c.maxObjectLines, c.maxLines-shown)
		cut := 0
		if len(lines) > limit {
			cut = len(lines) - limit
			lines = lines[:limit]
		}
		shown += len(lines)
		body := strings.Join(lines, "\n")
		fence := fenceFor(body)
		fmt.Fprintf(bw, "<details><summary>%s</summary>\n\n%sdiff\n%s\n%s\n", title, fence, body, fence)
		if cut > 0 {
			fmt.Fprintf(bw, "\n_%d more lines not shown; run `%s` for the full diff._\n", cut, c.command)
		}
		fmt.Fprintf(bw, "\n</details>\n\n")
	}
	return bw.Flush()
}

// fenceFor returns a backtick fence longer than any run of backticks in s.
func fenceFor(s string) string {
	longest, run := 0, 0
	for _, ch := range s {
		if ch == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// mdText escapes text for a Markdown table cell or heading.
func mdText(s string) string {
	s = html.EscapeString(s)
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`).Replace(s)
}

// mdCode formats s as inline code for a table cell; "" stays empty.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}
