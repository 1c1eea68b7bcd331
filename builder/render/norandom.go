package render

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// randomFuncs are the Sprig template functions whose results change on
// every render. deterministicTemplates replaces their calls.
var randomFuncs = []string{
	"randAlphaNum", "randAlpha", "randNumeric", "randAscii", "randBytes", "randInt", "uuidv4",
	"genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey",
	"genPrivateKey", "bcrypt", "htpasswd",
}

// deterministicTemplates rewrites the templates of ch and its dependencies,
// in memory, so that the random functions of Sprig give values derived from
// the chart name, the template file, the place of the call, the template
// being rendered and how many times the call ran before in that render: the
// chart then renders the same bytes every time, and a diff of an unchanged
// chart is empty, while a call that runs several times (in a range loop, or
// in a helper included more than once) gives a different value each time,
// as it does with Helm. The count is kept by a randomSeeds, which the
// rewritten calls reach through Helm's lookup function (see randomSeeds);
// the templates must be rendered by renderTemplate. The values keep their
// shape (randAlphaNum 5 gives five lowercase letters and digits, uuidv4 a
// version 4 UUID), so names made from them stay valid. Certificates (genCA,
// genSelfSignedCert, genSignedCert, ...) become objects whose .Cert and .Key
// are PEM blocks holding a value derived the same way, genPrivateKey such a
// PEM block, bcrypt and htpasswd a fixed-shape hash: charts put them into
// Secrets, and none of them is a working key. kbuild never writes rendered
// output into an artifact (the chart is published as upstream wrote it), so
// only its checks and diffs see these values. Template text in the chart's
// values, which charts render with tpl, is rewritten the same way (a value
// that only looks like a template changes too, but only in what kbuild
// renders for its checks).
//
// Only files and values that name a random function are rewritten; they
// are parsed as Helm would parse them and written back from the parse
// tree.
func deterministicTemplates(ch *chart.Chart) error {
	if err := deterministicValues(ch.Values, ch.ChartFullPath()+"/values.yaml:"); err != nil {
		return fmt.Errorf("chart %s: values.yaml: %w", ch.Name(), err)
	}
	for _, f := range ch.Templates {
		if !slices.ContainsFunc(randomFuncs, func(fn string) bool { return bytes.Contains(f.Data, []byte(fn)) }) {
			continue
		}
		data, err := rewriteRandom(ch.ChartFullPath()+"/"+f.Name, string(f.Data))
		if err != nil {
			return fmt.Errorf("chart %s: %s: %w", ch.Name(), f.Name, err)
		}
		f.Data = []byte(data)
	}
	for _, dep := range ch.Dependencies() {
		if err := deterministicTemplates(dep); err != nil {
			return err
		}
	}
	return nil
}

// deterministicValues rewrites, in place, every string of v (a values
// tree) that holds template text calling a random function, as
// deterministicTemplates rewrites templates; where names the value (its
// file and path) in the seeds. Text that does not parse as a template is
// left as it is: tpl would fail on it as well.
func deterministicValues(v any, where string) error {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if s, ok := v[k].(string); ok {
				v[k] = deterministicString(s, where+"."+k)
				continue
			}
			if err := deterministicValues(v[k], where+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i := range v {
			if s, ok := v[i].(string); ok {
				v[i] = deterministicString(s, fmt.Sprintf("%s[%d]", where, i))
				continue
			}
			if err := deterministicValues(v[i], fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func deterministicString(s, where string) string {
	if !strings.Contains(s, "{{") || !slices.ContainsFunc(randomFuncs, func(fn string) bool { return strings.Contains(s, fn) }) {
		return s
	}
	out, err := rewriteRandom(where, s)
	if err != nil {
		return s
	}
	return out
}

// rewriteRandom parses the template text of file and returns it with every
// call of a random function replaced by a deterministic expression.
func rewriteRandom(file, text string) (string, error) {
	t := parse.New(file)
	t.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(text, "", "", trees); err != nil {
		return "", err
	}
	calls := 0
	var out bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(trees)) {
		tr := trees[name]
		if tr.Root == nil {
			continue
		}
		walk(tr.Root, func(c *parse.CommandNode) {
			calls++
			replaceRandom(c, fmt.Sprintf("kbuild:%s#%d", file, calls))
		})
		if name == file {
			out.WriteString(tr.Root.String())
		} else {
			fmt.Fprintf(&out, "{{define %q}}%s{{end}}", name, tr.Root.String())
		}
	}
	return out.String(), nil
}

// walk calls f on every command of the tree below n.
func walk(n parse.Node, f func(*parse.CommandNode)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			for _, c := range n.Nodes {
				walk(c, f)
			}
		}
	case *parse.ActionNode:
		walk(n.Pipe, f)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, f)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, f)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, f)
	case *parse.TemplateNode:
		if n.Pipe != nil {
			walk(n.Pipe, f)
		}
	case *parse.PipeNode:
		if n != nil {
			for _, c := range n.Cmds {
				walk(c, f)
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walk(a, f)
		}
		f(n)
	case *parse.ChainNode:
		walk(n.Node, f)
	}
}

func walkBranch(b *parse.BranchNode, f func(*parse.CommandNode)) {
	walk(b.Pipe, f)
	if b.List != nil {
		walk(b.List, f)
	}
	if b.ElseList != nil {
		walk(b.ElseList, f)
	}
}

// replaceRandom turns command c into a deterministic one when it calls a
// random function; other commands stay as they are. site names the call
// (see seed). A count given through a pipeline ("5 | randAlphaNum") works
// too.
func replaceRandom(c *parse.CommandNode, site string) {
	id, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok || !slices.Contains(randomFuncs, id.Ident) {
		return
	}
	args := c.Args[1:]
	switch id.Ident {
	case "randAlphaNum", "randAscii":
		c.Args = append([]parse.Node{ident("printf"), str("%.[2]*[1]s"), hexPipe(site)}, args...)
	case "randAlpha":
		c.Args = append([]parse.Node{ident("printf"), str("%.[2]*[1]s"), hexPipe(site, "0g", "1h", "2i", "3j", "4k", "5l", "6m", "7n", "8o", "9p")}, args...)
	case "randNumeric":
		c.Args = append([]parse.Node{ident("printf"), str("%.[2]*[1]s"), hexPipe(site, "a0", "b1", "c2", "d3", "e4", "f5")}, args...)
	case "randBytes":
		if len(args) != 1 {
			return
		}
		c.Args = []parse.Node{ident("b64enc"), pipe(cmd(ident("printf"), str("%.[2]*[1]s"), hexPipe(site), args[0]))}
	case "randInt":
		if len(args) != 2 {
			return
		}
		c.Args = []parse.Node{ident("add"), args[0], pipe(cmd(ident("mod"), pipe(cmd(ident("adler32sum"), seed(site))), pipe(cmd(ident("sub"), args[1], args[0]))))}
	case "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey":
		c.Args = []parse.Node{ident("dict"), str("Cert"), pem("CERTIFICATE", site), str("Key"), pem("RSA PRIVATE KEY", site+"/key")}
	case "genPrivateKey":
		c.Args = []parse.Node{ident("printf"), str("%[1]s"), pem("PRIVATE KEY", site)}
	case "bcrypt":
		c.Args = []parse.Node{ident("printf"), str("$2a$10$%.53[1]s"), hexPipe(site)}
	case "htpasswd":
		if len(args) != 2 {
			return
		}
		c.Args = []parse.Node{ident("printf"), str("%[1]s:$2a$10$%.53[2]s"), args[0], hexPipe(site)}
	case "uuidv4":
		c.Args = []parse.Node{ident("regexReplaceAll"), str("^(.{8})(.{4}).(.{3}).(.{3})(.{12}).*$"), pipe(cmd(ident("sha256sum"), seed(site))), str("${1}-${2}-4${3}-8${4}-${5}")}
	}
}

// pem is a PEM block of the given type whose body is derived from the seed
// of site.
func pem(typ, site string) parse.Node {
	return pipe(cmd(ident("printf"), str("-----BEGIN "+typ+"-----\n%[1]s\n-----END "+typ+"-----\n"), pipe(cmd(ident("b64enc"), pipe(cmd(ident("sha256sum"), seed(site)))))))
}

// hexPipe is (sha256sum SEED | replace A B ... | repeat 16), SEED the seed
// of site: 1024 hex digits, with each pair's first character replaced by
// its second.
func hexPipe(site string, pairs ...string) *parse.PipeNode {
	p := pipe(cmd(ident("sha256sum"), seed(site)))
	for _, r := range pairs {
		p.Cmds = append(p.Cmds, cmd(ident("replace"), str(r[:1]), str(r[1:])))
	}
	p.Cmds = append(p.Cmds, cmd(ident("repeat"), num(16)))
	return p
}

// seed is (index (lookup seedAPIVersion seedKind "" SITE) "seed"): the seed
// randomSeeds gives this execution of the call at site.
func seed(site string) parse.Node {
	return pipe(cmd(ident("index"), pipe(cmd(ident("lookup"), str(seedAPIVersion), str(seedKind), str(""), str(site))), str("seed")))
}

// The rewritten calls ask Helm's lookup function for objects of this
// apiVersion and kind; only randomSeeds serves them.
const (
	seedAPIVersion = "render.kbuild.dev/v1"
	seedKind       = "RandomSeed"
)

// randomSeeds is the engine.ClientProvider of the render of one template
// (see renderTemplate). A lookup of a RandomSeed named after a call site
// returns {"seed": "SITE@TEMPLATE#N"}: TEMPLATE the template being
// rendered, N how many times this render looked the site up before. A call
// thus gives a value of its own each time it runs, the same on every render
// of the same chart and values, and the same whichever other templates
// were rendered before: each render starts with a new randomSeeds. Every
// other lookup finds nothing, as Helm's lookup does without a cluster.
type randomSeeds struct {
	template string
	counts   map[string]int
}

func newRandomSeeds(template string) *randomSeeds {
	return &randomSeeds{template: template, counts: map[string]int{}}
}

// GetClientFor implements engine.ClientProvider.
func (s *randomSeeds) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if apiVersion == seedAPIVersion && kind == seedKind {
		return seedClient{seeds: s}, false, nil
	}
	return seedClient{}, false, nil
}

// seedClient answers Helm's lookup: with seeds, Get gives a seed; without,
// nothing is found. Helm's lookup calls only Get and List; the embedded
// interface is nil, and any other method would panic.
type seedClient struct {
	dynamic.NamespaceableResourceInterface
	seeds *randomSeeds
}

func (c seedClient) Namespace(string) dynamic.ResourceInterface { return c }

func (c seedClient) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	if c.seeds == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, name)
	}
	n := c.seeds.counts[name]
	c.seeds.counts[name]++
	return &unstructured.Unstructured{Object: map[string]any{"seed": fmt.Sprintf("%s@%s#%d", name, c.seeds.template, n)}}, nil
}

func (c seedClient) List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{}, "")
}

func ident(s string) *parse.IdentifierNode { return parse.NewIdentifier(s) }

func str(s string) *parse.StringNode {
	return &parse.StringNode{NodeType: parse.NodeString, Quoted: strconv.Quote(s), Text: s}
}

func num(i int) *parse.NumberNode {
	return &parse.NumberNode{NodeType: parse.NodeNumber, IsInt: true, Int64: int64(i), Text: strconv.Itoa(i)}
}

func cmd(args ...parse.Node) *parse.CommandNode {
	return &parse.CommandNode{NodeType: parse.NodeCommand, Args: args}
}

func pipe(cmds ...*parse.CommandNode) *parse.PipeNode {
	return &parse.PipeNode{NodeType: parse.NodePipe, Cmds: cmds}
}
