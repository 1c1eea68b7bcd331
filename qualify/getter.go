package qualify

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// restGetter is what every namespace's Helm configuration gets its
// clients from: the qualification's one client configuration, discovery
// cache (in memory) and REST mapper, shared across namespaces and phases,
// only the namespace differs. genericclioptions' ConfigFlags, which the
// helm CLI uses, re-read the kubeconfig and the on-disk discovery cache
// on every call: a fifth of kbuild's CPU on the Foreman stack.
type restGetter struct {
	c   *cluster
	raw clientcmd.ClientConfig
}

func newRESTGetter(c *cluster, kubeconfig, kubecontext, namespace string) restGetter {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	over := &clientcmd.ConfigOverrides{CurrentContext: kubecontext, Context: clientcmdapi.Context{Namespace: namespace}}
	return restGetter{c: c, raw: clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, over)}
}

// ToRESTConfig returns a copy of the cluster's client configuration
// over its one shared transport (cluster.shared).
func (g restGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.c.shared), nil }

// ToDiscoveryClient returns the shared in-memory discovery cache.
func (g restGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.c.discovery, nil
}

// ToRESTMapper returns the shared REST mapper (Helm resets it after
// creating CRDs).
func (g restGetter) ToRESTMapper() (meta.RESTMapper, error) { return g.c.mapper, nil }

// ToRawKubeConfigLoader returns the kubeconfig with the namespace set.
func (g restGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig { return g.raw }

// sharedTransport returns cfg over one transport made once: TLS,
// credentials, impersonation and exec or auth plugins all in the
// transport, none left in the configuration. Helm's resource builder
// makes a REST client per object (cli-runtime's ClientForMapping); from
// cfg itself each would look its transport up again in client-go's cache,
// whose key is computed from the certificates every time (a tenth of
// kbuild's CPU on the Foreman stack). The requests are the same.
func sharedTransport(cfg *rest.Config) (*rest.Config, error) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: the client's transport: %w", err)
	}
	return &rest.Config{
		Host:                      cfg.Host,
		APIPath:                   cfg.APIPath,
		ContentConfig:             cfg.ContentConfig,
		Transport:                 rt,
		QPS:                       cfg.QPS,
		Burst:                     cfg.Burst,
		Timeout:                   cfg.Timeout,
		WarningHandler:            cfg.WarningHandler,
		WarningHandlerWithContext: cfg.WarningHandlerWithContext,
	}, nil
}
