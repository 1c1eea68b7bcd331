package main

func newTrustCmd() *Command {
	return &Command{
		Use:     "trust COMMAND",
		Summary: "Manage the root of trust and delegated signatures of package versions.",
		Help: `A root of trust (root.yaml, and root/<N>.yaml for every version N) says which
keys sign roots, which sign index.yaml, and which packages are delegated to
a team's keys. Subscribers pin the root keys; each new root version must be
signed by the previous version's root keys and its own, so keys can be
rotated without touching subscribers.`,
		Subcommands: []*Command{
			{
				Use:         "root COMMAND",
				Summary:     "Create, advance and sign root.yaml.",
				Subcommands: []*Command{newTrustRootNewCmd(), newTrustRootNextCmd(), newTrustRootSignCmd()},
			},
			newTrustSignCmd(),
		},
	}
}
