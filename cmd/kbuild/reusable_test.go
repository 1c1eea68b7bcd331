package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflowFile is the part of a GitHub workflow the reusable workflow
// checks read.
type workflowFile struct {
	On struct {
		WorkflowCall *struct {
			Inputs map[string]struct {
				Required bool   `yaml:"required"`
				Type     string `yaml:"type"`
			} `yaml:"inputs"`
			Secrets map[string]struct {
				Description string `yaml:"description"`
				Required    bool   `yaml:"required"`
			} `yaml:"secrets"`
		} `yaml:"workflow_call"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		Uses        string            `yaml:"uses"`
		With        map[string]any    `yaml:"with"`
		Secrets     map[string]string `yaml:"secrets"`
		Permissions map[string]string `yaml:"permissions"`
		Steps       []struct {
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflowFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, ".github", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflowFile
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return wf
}

// TestReusableWorkflows: each of the three jobs this repository runs is a
// reusable workflow (on: workflow_call) another repository calls with one
// job, taking the kbuild version and the documented inputs and secrets,
// running kbuild's action (whose scripts TestWorkflowScripts runs) for
// each of its commands, with permissions per job; and this repository's
// pr.yml, publish.yml and promote.yml only call them, with kbuild built
// from the checkout, so every change exercises them.
func TestReusableWorkflows(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inputs   []string
		secret   bool
		commands []string
	}{
		{"pr", []string{"kbuild-version", "kbuild-repository", "site-url", "recipes"}, false, []string{"test", "diff"}},
		{"publish", []string{"kbuild-version", "kbuild-repository", "registry", "site-url", "recipes", "suites", "shards", "keyless"}, true, []string{"plan", "build", "publish"}},
		{"promote", []string{"kbuild-version", "kbuild-repository", "site-url", "suites", "what", "build", "to"}, true, []string{"promote"}},
	} {
		reusable := "reusable-" + tc.name + ".yml"
		wf := readWorkflow(t, reusable)
		call := wf.On.WorkflowCall
		if call == nil {
			t.Errorf("%s: not on: workflow_call", reusable)
			continue
		}
		for _, in := range tc.inputs {
			if _, ok := call.Inputs[in]; !ok {
				t.Errorf("%s: no input %s", reusable, in)
			}
		}
		if !call.Inputs["kbuild-version"].Required {
			t.Errorf("%s: input kbuild-version is not required", reusable)
		}
		key, hasKey := call.Secrets["KBUILD_SIGN_KEY"]
		if hasKey != tc.secret || (tc.secret && (!key.Required || key.Description == "")) {
			t.Errorf("%s: secret KBUILD_SIGN_KEY = %+v (declared %v), want declared %v, required and described", reusable, key, hasKey, tc.secret)
		}
		if len(wf.Permissions) != 1 || wf.Permissions["contents"] != "read" {
			t.Errorf("%s: workflow permissions = %v, want contents: read only (each job asks for its own)", reusable, wf.Permissions)
		}
		var commands []string
		for name, job := range wf.Jobs {
			if job.Permissions == nil {
				t.Errorf("%s: job %s sets no permissions", reusable, name)
			}
			for _, s := range job.Steps {
				if s.Uses == "./.kbuild-action" {
					if s.With["version"] != "${{ inputs.kbuild-version }}" {
						t.Errorf("%s: job %s runs the action with version %q, want the input kbuild-version", reusable, name, s.With["version"])
					}
					commands = append(commands, s.With["command"])
					if _, ok := call.Inputs["suites"]; ok && s.With["suites"] != "${{ inputs.suites }}" {
						t.Errorf("%s: job %s runs the action's %s with suites %q, want the input suites", reusable, name, s.With["command"], s.With["suites"])
					}
				}
			}
		}
		slices.Sort(commands)
		want := slices.Sorted(slices.Values(tc.commands))
		if !slices.Equal(commands, want) {
			t.Errorf("%s runs the action's commands %v, want %v", reusable, commands, want)
		}

		caller := readWorkflow(t, tc.name+".yml")
		if len(caller.Jobs) != 1 {
			t.Errorf("%s: %d jobs, want one that calls %s", tc.name+".yml", len(caller.Jobs), reusable)
		}
		for name, job := range caller.Jobs {
			if job.Uses != "./.github/workflows/"+reusable || len(job.Steps) != 0 {
				t.Errorf("%s: job %s uses %q with %d steps, want only a call of ./.github/workflows/%s", tc.name+".yml", name, job.Uses, len(job.Steps), reusable)
			}
			if job.With["kbuild-version"] != "checkout" {
				t.Errorf("%s: job %s calls with kbuild-version %v, want checkout (kbuild built from this commit)", tc.name+".yml", name, job.With["kbuild-version"])
			}
			if got := job.Secrets["KBUILD_SIGN_KEY"]; tc.secret != (got == "${{ secrets.KBUILD_SIGN_KEY }}") {
				t.Errorf("%s: job %s passes KBUILD_SIGN_KEY %q, want it passed: %v", tc.name+".yml", name, got, tc.secret)
			}
		}
	}
}

// TestKeylessInput: reusable-publish.yml's boolean input keyless (off by
// default) reaches the action's publish in the job that has id-token:
// write, and the action hands it to scripts/publish.sh as KBUILD_KEYLESS,
// which adds --keyless to kbuild publish.
func TestKeylessInput(t *testing.T) {
	wf := readWorkflow(t, "reusable-publish.yml")
	if in := wf.On.WorkflowCall.Inputs["keyless"]; in.Type != "boolean" || in.Required {
		t.Errorf("reusable-publish.yml: input keyless = %+v, want an optional boolean", in)
	}
	found := false
	for name, job := range wf.Jobs {
		for _, s := range job.Steps {
			if s.Uses != "./.kbuild-action" || s.With["command"] != "publish" {
				continue
			}
			found = true
			if s.With["keyless"] != "${{ inputs.keyless }}" || job.Permissions["id-token"] != "write" {
				t.Errorf("reusable-publish.yml: job %s runs publish with keyless %q and id-token %q, want the input and write", name, s.With["keyless"], job.Permissions["id-token"])
			}
		}
	}
	if !found {
		t.Error("reusable-publish.yml runs no publish")
	}
	action, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "publish.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ file, data, text string }{
		{"action.yml", string(action), "KBUILD_KEYLESS: ${{ inputs.keyless }}"},
		{"scripts/publish.sh", string(script), `[ "${KBUILD_KEYLESS:-false}" = true ] && keyless=(--keyless)`},
		{"scripts/publish.sh", string(script), `"${keyless[@]}"`},
	} {
		if !strings.Contains(want.data, want.text) {
			t.Errorf("%s lacks %s", want.file, want.text)
		}
	}
}

// TestActionSuitesInput: the action takes the suites file as an input and
// hands it to its scripts as SUITES, which scripts/publish.sh reads
// everywhere (TestWorkflowScripts runs it with a suites file elsewhere
// than suites.yaml).
func TestActionSuitesInput(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Steps []struct {
				ID  string            `yaml:"id"`
				Env map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if in, ok := action.Inputs["suites"]; !ok || in.Default != "suites.yaml" {
		t.Errorf("action.yml: input suites = %+v (declared %v), want default suites.yaml", in, ok)
	}
	for _, s := range action.Runs.Steps {
		if s.ID == "run" && s.Env["SUITES"] != "${{ inputs.suites }}" {
			t.Errorf("action.yml: the command step sets SUITES=%q, want the input suites", s.Env["SUITES"])
		}
	}
}
