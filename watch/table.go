package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable writes one row per recipe and upstream to w: RECIPE,
// UPSTREAM, CURRENT, NEWEST and STATUS (up to date, outdated, none
// allowed, error, or unwatched for a recipe without a rule).
func WriteTable(w io.Writer, reports []Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECIPE\tUPSTREAM\tCURRENT\tNEWEST\tSTATUS")
	for _, r := range reports {
		if r.Error != "" {
			status := "error"
			if r.Unwatched {
				status = "unwatched"
			}
			fmt.Fprintf(tw, "%s\t-\t-\t-\t%s\n", r.Recipe, status)
			continue
		}
		for _, s := range r.Upstreams {
			name := r.Recipe
			if s.Name != PackageUpstream {
				name += " (" + s.Name + ")"
			}
			status := "up to date"
			switch {
			case s.Error != "":
				status = "error"
			case s.Outdated:
				status = "outdated"
			case s.Newest == "":
				status = "none allowed"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, s.Upstream, orDash(s.Current), orDash(s.Newest), status)
		}
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Tally returns the errors of reports, each "RECIPE: ERROR" (a recipe
// without a rule is no error), and how many recipes are outdated.
func Tally(reports []Report) (errs []string, outdated int) {
	for _, r := range reports {
		if r.Error != "" && !r.Unwatched {
			errs = append(errs, r.Recipe+": "+r.Error)
		}
		for _, s := range r.Upstreams {
			if s.Error != "" {
				errs = append(errs, r.Recipe+": "+s.Error)
			}
		}
		if r.Outdated() {
			outdated++
		}
	}
	return errs, outdated
}

// WriteJSON writes the reports as an indented JSON array, as kbuild
// outdated --format json prints them.
func WriteJSON(w io.Writer, reports []Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(reports)
}
