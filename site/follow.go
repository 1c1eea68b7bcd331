package site

import "strings"

// FollowRepository is the OCI repository (oci://…) in which a Flux, Argo
// CD or Helm cluster follows suite's builds of chart name of
// chartRepository: it holds exactly the builds the suite holds, under
// their tags and digests (suite.Follow keeps it so).
func FollowRepository(chartRepository, suite, chart string) string {
	return strings.TrimSuffix(chartRepository, "/") + "/suites/" + suite + "/" + chart
}
