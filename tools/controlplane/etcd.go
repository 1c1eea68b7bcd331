package main

import "go.etcd.io/etcd/server/v3/etcdmain"

// runEtcd is etcd's own main at the release k8s.io/kubernetes is tested
// with (an etcd that serves watch progress requests, which the API
// server's streaming lists need; Debian's 3.4 does not).
func runEtcd(args []string) int {
	etcdmain.Main(append([]string{"etcd"}, args...))
	return 0
}
