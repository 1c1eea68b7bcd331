package main

import "strings"

// actionRef is the ref of kbuild's reusable workflows the written workflows call: this
// kbuild's release, or main for a build from a checkout.
func actionRef() string {
	if v := thisKbuild().Release; strings.HasPrefix(v, "v") {
		return v
	}
	return "main"
}
