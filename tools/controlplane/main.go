// Command kcp is a multi-call binary: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler (all at the release of
// k8s.io/kubernetes go.mod pins, with the etcd it requires) and kwok,
// linked once. The first argument (or the name it is called by) picks the program:
//
//	kcp kube-apiserver --etcd-servers=http://127.0.0.1:2379 ...
//	kcp kwok --kubeconfig=... --config=stages.yaml
//
// kbuild's cluster tests (internal/controlplane) start one process per
// program from this binary, on loopback, with generated certificates.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// programs maps each program name to its entry point. An entry point gets the
// arguments after the program name and returns the exit code.
var programs = map[string]func(args []string) int{
	"etcd":                    runEtcd,
	"kube-apiserver":          runAPIServer,
	"kube-controller-manager": runControllerManager,
	"kube-scheduler":          runScheduler,
	"kwok":                    runKwok,
}

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if _, ok := programs[name]; !ok {
		if len(args) == 0 {
			usage()
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	run, ok := programs[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "kcp: unknown program %q\n", name)
		usage()
		os.Exit(2)
	}
	// Each program parses os.Args itself (cobra); give it the view it expects.
	os.Args = append([]string{name}, args...)
	os.Exit(run(args))
}

func usage() {
	names := make([]string, 0, len(programs))
	for n := range programs {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: kcp (%s) [flags]\n", strings.Join(names, " | "))
}
