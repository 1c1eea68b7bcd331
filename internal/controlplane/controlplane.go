// Package controlplane starts a real Kubernetes control plane on loopback
// for kbuild's cluster tests and benchmarks: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler (all from kcp, the one binary
// tools/controlplane links from k8s.io/kubernetes and go.etcd.io/etcd at
// the releases Kubernetes is tested with), then kwok running
// fake nodes with kbuild's own Stages (stages.yaml), so that Deployments,
// StatefulSets, DaemonSets and Jobs really become ready or complete
// through the real controllers and scheduler. No container runs: image
// pulls and application behaviour are not exercised.
//
// Every process listens on a free 127.0.0.1 port with certificates made
// for this cluster only, logs to Dir/logs/NAME.log and is stopped by Stop.
package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

//go:embed stages.yaml
var stages []byte

// serviceIP is the first address of the service range: the kubernetes
// Service's ClusterIP, which the serving certificate names.
const (
	serviceRange = "10.96.0.0/16"
	serviceIP    = "10.96.0.1"
)

// Node is a fake node kwok runs.
type Node struct {
	Name string
	Arch string // kubernetes.io/arch and status.nodeInfo.architecture
}

// Options say which binaries to start and where the cluster lives.
type Options struct {
	KCP   string // the kcp multi-call binary (tools/controlplane)
	Dir   string // certificates, etcd data, kubeconfig and logs
	Nodes []Node // default: one amd64 node, kwok-node-0
	// Ready bounds the whole start (default 2 minutes).
	Ready time.Duration
}

// Cluster is a running control plane.
type Cluster struct {
	Dir        string
	Kubeconfig string // administrator (system:masters) kubeconfig
	Server     string // https://127.0.0.1:PORT
	Nodes      []Node
	// Started says how long each step of the start took, in order.
	Started []Step

	pki     *pki
	procs   []*process
	cleanup []func()
}

// Step is one timed step of the start.
type Step struct {
	Name string
	Took time.Duration
}

type process struct {
	name string
	bin  string
	args []string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// Start starts etcd, the control plane and kwok, creates the nodes and
// returns when they are Ready and the controllers are working (the default
// namespace has its service account). On error everything started is
// stopped again.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if o.Ready <= 0 {
		o.Ready = 2 * time.Minute
	}
	if len(o.Nodes) == 0 {
		o.Nodes = []Node{{Name: "kwok-node-0", Arch: "amd64"}}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Ready)
	defer cancel()
	if err := os.MkdirAll(filepath.Join(o.Dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	c = &Cluster{Dir: o.Dir, Nodes: o.Nodes, Kubeconfig: filepath.Join(o.Dir, "kubeconfig")}
	defer func() {
		if err != nil {
			c.Stop()
			c = nil
		}
	}()
	step := func(name string, f func() error) error {
		start := time.Now()
		if err := f(); err != nil {
			return fmt.Errorf("control plane: %s: %w", name, err)
		}
		c.Started = append(c.Started, Step{Name: name, Took: time.Since(start)})
		return nil
	}
	var etcdURL string
	steps := []struct {
		name string
		f    func() error
	}{
		{"certificates", func() (err error) { c.pki, err = newPKI(o.Dir); return err }},
		{"etcd", func() (err error) { etcdURL, err = c.startEtcd(ctx, o); return err }},
		{"kube-apiserver", func() error { return c.startAPIServer(ctx, o, etcdURL) }},
		{"controllers", func() error { return c.startControllers(o) }},
		{"nodes", func() error { return c.startNodes(ctx, o) }},
	}
	for _, s := range steps {
		if err := step(s.name, s.f); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Stop stops every process, newest first: SIGTERM, then SIGKILL after
// ten seconds. It may be called more than once.
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].stop(10 * time.Second)
	}
	for _, f := range c.cleanup {
		f()
	}
	c.cleanup = nil
}

// Kill stops one component at once with SIGKILL (kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler or kwok), as a crash would.
func (c *Cluster) Kill(name string) error {
	for _, p := range c.procs {
		if p.name == name {
			p.stop(0)
			return nil
		}
	}
	return fmt.Errorf("no process %q", name)
}

// LogFile returns the log file of a component.
func (c *Cluster) LogFile(name string) string { return filepath.Join(c.Dir, "logs", name+".log") }

func (c *Cluster) start(name, bin string, args ...string) (*process, error) {
	log, err := os.Create(c.LogFile(name))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, bin: bin, args: args, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); log.Close(); close(p.done) }()
	c.procs = append(c.procs, p)
	return p, nil
}

func (p *process) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	if grace > 0 {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// restart starts p again, in p's place among the cluster's processes,
// once p has exited; p's log is kept as LOG.1 beside the new one.
func (c *Cluster) restart(p *process) (*process, error) {
	<-p.done
	if err := os.Rename(p.log.Name(), p.log.Name()+".1"); err != nil {
		return nil, err
	}
	q, err := c.start(p.name, p.bin, p.args...)
	if err != nil {
		return nil, err
	}
	c.procs = c.procs[:len(c.procs)-1]
	for i := range c.procs {
		if c.procs[i] == p {
			c.procs[i] = q
		}
	}
	return q, nil
}

// exited says why a process that should be running is not, with the end
// of its log.
func (p *process) exited() error {
	select {
	case <-p.done:
		b, _ := os.ReadFile(p.log.Name())
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		return fmt.Errorf("%s exited (%v); the end of %s:\n%s", p.name, p.err, p.log.Name(), b)
	default:
		return nil
	}
}

func (c *Cluster) startEtcd(ctx context.Context, o Options) (string, error) {
	ports, err := freePorts(2)
	if err != nil {
		return "", err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	// etcd syncs every write to disk; a test cluster's data lives in
	// memory (/dev/shm) where there is one, so a busy disk does not slow
	// every API call down.
	data := filepath.Join(o.Dir, "etcd")
	if shm, err := os.MkdirTemp("/dev/shm", "kbuild-etcd-"); err == nil {
		data = shm
		c.cleanup = append(c.cleanup, func() { os.RemoveAll(shm) })
	}
	p, err := c.start("etcd", o.KCP, "etcd",
		"--name=kbuild", "--data-dir="+data,
		"--listen-client-urls="+url, "--advertise-client-urls="+url,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=kbuild="+peerURL, "--log-level=warn")
	if err != nil {
		return "", err
	}
	return url, poll(ctx, p, func() error { return httpOK(ctx, http.DefaultClient, url+"/health") })
}

func (c *Cluster) startAPIServer(ctx context.Context, o Options, etcdURL string) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	c.Server = "https://127.0.0.1:" + strconv.Itoa(ports[0])
	p, err := c.start("kube-apiserver", o.KCP, "kube-apiserver",
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(ports[0]),
		"--tls-cert-file="+c.pki.serverCert, "--tls-private-key-file="+c.pki.serverKey,
		"--client-ca-file="+c.pki.caCert,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+c.pki.saPub,
		"--service-account-signing-key-file="+c.pki.saKey,
		"--service-cluster-ip-range="+serviceRange,
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--endpoint-reconciler-type=none", // the loopback address may not be an endpoint
		"--profiling=false",
		"--v=0")
	if err != nil {
		return err
	}
	if err := c.writeKubeconfig(); err != nil {
		return err
	}
	hc, err := c.httpClient()
	if err != nil {
		return err
	}
	return poll(ctx, p, func() error { return httpOK(ctx, hc, c.Server+"/readyz") })
}

func (c *Cluster) startControllers(o Options) error {
	if _, err := c.start("kube-controller-manager", o.KCP, "kube-controller-manager",
		"--kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig,
		"--leader-elect=false", "--secure-port=0",
		"--service-account-private-key-file="+c.pki.saKey,
		"--root-ca-file="+c.pki.caCert,
		"--use-service-account-credentials=false",
		// kwok's nodes send no heartbeats: a node stays Ready for the
		// length of any test rather than being tainted after 50 s
		"--node-monitor-grace-period=1h",
		"--concurrent-deployment-syncs=5", "--concurrent-replicaset-syncs=5",
		// PersistentVolumeClaims of the default StorageClass (startNodes
		// makes it, as kind has one) are bound to volumes under
		// /tmp/hostpath_pv that no pod ever mounts, and removed with them
		"--enable-hostpath-provisioner",
		"--v=0"); err != nil {
		return err
	}
	if _, err := c.start("kube-scheduler", o.KCP, "kube-scheduler",
		"--kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig,
		"--leader-elect=false", "--secure-port=0", "--v=0"); err != nil {
		return err
	}
	stagesFile := filepath.Join(o.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stagesFile, stages, 0o644); err != nil {
		return err
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	_, err = c.start("kwok", o.KCP, "kwok",
		"--kubeconfig="+c.Kubeconfig,
		"--config="+stagesFile,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+kwokAnnotation+"=fake",
		"--node-lease-duration-seconds=0", // no lease: one kwok owns the nodes; the heartbeat stage keeps them Ready
		"--server-address=127.0.0.1:"+strconv.Itoa(ports[0]),
		"--cidr=10.244.0.0/16", "--node-ip=127.0.0.1", "--v="+kwokLogLevel())
	return err
}

// kwokAnnotation marks the nodes kwok manages.
const kwokAnnotation = "kwok.x-k8s.io/node"

func (c *Cluster) writeKubeconfig() error {
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kbuild-test
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: kbuild-test
  context: {cluster: kbuild-test, user: admin}
current-context: kbuild-test
`, c.Server, c.pki.caCert, c.pki.adminCert, c.pki.adminKey)
	return os.WriteFile(c.Kubeconfig, []byte(kc), 0o600)
}

func (c *Cluster) httpClient() (*http.Client, error) {
	pem, err := os.ReadFile(c.pki.caCert)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	cert, err := tls.LoadX509KeyPair(c.pki.adminCert, c.pki.adminKey)
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		}},
	}, nil
}

// poll calls ready every 100 ms until it succeeds, the context ends or the
// process exits.
func poll(ctx context.Context, p *process, ready func() error) error {
	var last error
	for {
		if last = ready(); last == nil {
			return nil
		}
		if err := p.exited(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last: %v)", p.name, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func httpOK(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// freePorts returns n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// kwokLogLevel is kwok's log level: info, or $KBUILD_KWOK_LOG (debug)
// when debugging its Stages.
func kwokLogLevel() string {
	if l := os.Getenv("KBUILD_KWOK_LOG"); l != "" {
		return l
	}
	return "info"
}
