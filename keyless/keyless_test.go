package keyless_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"kbuild.dev/kbuild/internal/sigstoretest"
	"kbuild.dev/kbuild/keyless"
	"kbuild.dev/kbuild/sigbundle"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func static(tok string) keyless.TokenSource {
	return func(context.Context) (string, error) { return tok, nil }
}

// TestSignVerify signs statements against the loopback Sigstore and
// checks them with sigstore-go's verifier, as cosign does: the identity
// of the workflow passes; another subject, another issuer, another
// digest and a changed payload are refused. One certificate serves every
// bundle, each bundle has its own log entry.
func TestSignVerify(t *testing.T) {
	ss := sigstoretest.New(t)
	claims := sigstoretest.Workflow("acme/packages", "publish.yml")
	s, err := keyless.New(context.Background(), static(ss.Token(claims)), keyless.WithFulcio(ss.FulcioURL), keyless.WithRekor(ss.RekorURL))
	if err != nil {
		t.Fatal(err)
	}
	want := keyless.Identity{Issuer: ss.IssuerURL, Subject: "https://github.com/acme/packages/.github/workflows/publish.yml@refs/heads/main", Repository: "acme/packages"}
	if got := s.Identity(); got != want {
		t.Errorf("Identity() before signing = %+v, want %+v", got, want)
	}
	tm, err := ss.Material()
	if err != nil {
		t.Fatal(err)
	}
	var bundles [][]byte
	for _, p := range []string{sigbundle.SignPredicate, sigbundle.SLSAProvenanceV1} {
		st, err := sigbundle.NewStatement("registry.example/charts/alpha", digest, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Sign(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		if !keyless.IsKeyless(b) {
			t.Errorf("IsKeyless(bundle) = false")
		}
		got, err := keyless.Verify(b, digest, keyless.VerifyOptions{TrustedRoot: tm, Identity: want, IgnoreSCT: true})
		if err != nil {
			t.Fatalf("Verify(%s bundle): %v", p, err)
		}
		if got.PredicateType != p {
			t.Errorf("Verify returned a %s statement, want %s", got.PredicateType, p)
		}
		bundles = append(bundles, b)
	}
	if got := s.Identity(); got != want {
		t.Errorf("Identity() after signing = %+v, want %+v", got, want)
	}
	if ss.Certificates != 1 || ss.Entries != 2 {
		t.Errorf("Fulcio issued %d certificates and Rekor logged %d entries, want 1 and 2", ss.Certificates, ss.Entries)
	}

	other := "sha256:" + strings.Repeat("f", 64)
	tampered := strings.Replace(string(bundles[0]), `"payload":"`, `"payload":"e30K`, 1)
	for _, tc := range []struct {
		name   string
		data   []byte
		digest string
		id     keyless.Identity
	}{
		{"another subject", bundles[0], digest, keyless.Identity{Issuer: want.Issuer, Subject: "https://github.com/mallory/packages/.github/workflows/publish.yml@refs/heads/main"}},
		{"another issuer", bundles[0], digest, keyless.Identity{Issuer: keyless.GitHubIssuer, Subject: want.Subject}},
		{"another repository", bundles[0], digest, keyless.Identity{Issuer: want.Issuer, Subject: want.Subject, Repository: "mallory/packages"}},
		{"another digest", bundles[0], other, want},
		{"changed payload", []byte(tampered), digest, want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := keyless.Verify(tc.data, tc.digest, keyless.VerifyOptions{TrustedRoot: tm, Identity: tc.id, IgnoreSCT: true}); !errors.Is(err, keyless.ErrVerify) {
				t.Errorf("Verify = %v, want ErrVerify", err)
			}
		})
	}
	// Without IgnoreSCT the loopback CA's certificates (no SCT) fail, as
	// cosign without --insecure-ignore-sct refuses them.
	if _, err := keyless.Verify(bundles[0], digest, keyless.VerifyOptions{TrustedRoot: tm, Identity: want}); !errors.Is(err, keyless.ErrVerify) {
		t.Errorf("Verify without IgnoreSCT = %v, want ErrVerify", err)
	}
}

// TestReusableWorkflowIdentity: a job calling a reusable workflow of
// another repository is certified for that workflow, the same subject for
// every caller; the repository tells callers apart.
func TestReusableWorkflowIdentity(t *testing.T) {
	ss := sigstoretest.New(t)
	claims := sigstoretest.Workflow("acme/packages", "publish.yml")
	claims.WorkflowRef = "kbuild-dev/kbuild/.github/workflows/reusable-publish.yml@refs/tags/v0.3.0"
	s, err := keyless.New(context.Background(), static(ss.Token(claims)), keyless.WithFulcio(ss.FulcioURL), keyless.WithRekor(ss.RekorURL))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := sigbundle.NewStatement("r/c", digest, sigbundle.SignPredicate, nil)
	b, err := s.Sign(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	id := s.Identity()
	if id.Subject != "https://github.com/"+claims.WorkflowRef || id.Repository != "acme/packages" {
		t.Fatalf("Identity() = %+v, want kbuild's reusable workflow and the repository acme/packages", id)
	}
	tm, _ := ss.Material()
	if _, err := keyless.Verify(b, digest, keyless.VerifyOptions{TrustedRoot: tm, Identity: id, IgnoreSCT: true}); err != nil {
		t.Errorf("Verify for the caller: %v", err)
	}
	id.Repository = "mallory/packages"
	if _, err := keyless.Verify(b, digest, keyless.VerifyOptions{TrustedRoot: tm, Identity: id, IgnoreSCT: true}); !errors.Is(err, keyless.ErrVerify) {
		t.Errorf("Verify for another caller of the same workflow = %v, want ErrVerify", err)
	}
}

// TestFulcioRefusesForgedToken: a token claiming another issuer is
// refused by Fulcio, and New fails on a token that is no JWT.
func TestFulcioRefusesForgedToken(t *testing.T) {
	ss := sigstoretest.New(t)
	forged := ss.TokenFor(keyless.GitHubIssuer, "sigstore", sigstoretest.Workflow("acme/packages", "publish.yml"))
	s, err := keyless.New(context.Background(), static(forged), keyless.WithFulcio(ss.FulcioURL), keyless.WithRekor(ss.RekorURL))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := sigbundle.NewStatement("r/c", digest, sigbundle.SignPredicate, nil)
	if _, err := s.Sign(context.Background(), st); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Sign with a forged token = %v, want Fulcio's 401", err)
	}
	if _, err := keyless.New(context.Background(), static("not-a-jwt")); err == nil {
		t.Error("New with a token that is not a JWT passed")
	}
}

// TestToken reads the token from KBUILD_OIDC_TOKEN, or asks GitHub
// Actions' endpoint for one with the audience sigstore and the request
// token as bearer; without either it is ErrNoToken.
func TestToken(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, err := keyless.Token(env(nil), nil); !errors.Is(err, keyless.ErrNoToken) {
		t.Errorf("Token() with no environment = %v, want ErrNoToken", err)
	}
	src, err := keyless.Token(env(map[string]string{keyless.TokenEnv: "a.b.c\n"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok, _ := src(context.Background()); tok != "a.b.c" {
		t.Errorf("token from %s = %q", keyless.TokenEnv, tok)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer req-token" || r.URL.Query().Get("audience") != "sigstore" || r.URL.Query().Get("api-version") != "2.0" {
			http.Error(w, "bad request "+r.URL.String(), http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(`{"count":1,"value":"x.y.z"}`))
	}))
	defer srv.Close()
	src, err = keyless.Token(env(map[string]string{keyless.GitHubRequestURL: srv.URL + "/token?api-version=2.0", keyless.GitHubRequestToken: "req-token"}), srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := src(context.Background()); err != nil || tok != "x.y.z" {
		t.Errorf("token from GitHub Actions = %q, %v", tok, err)
	}
	src, _ = keyless.Token(env(map[string]string{keyless.GitHubRequestURL: srv.URL + "/token", keyless.GitHubRequestToken: "wrong"}), srv.Client())
	if _, err := src(context.Background()); err == nil || !strings.Contains(err.Error(), "id-token: write") {
		t.Errorf("token with a refused request = %v, want a hint at id-token: write", err)
	}
}

// TestSignChecksTrustedRoot: WithTrustedRootFile makes Sign verify each
// bundle before returning it: against its own Sigstore's trusted root it
// signs; against another Sigstore's it refuses, naming the instances; a
// trusted root that cannot be read fails New.
func TestSignChecksTrustedRoot(t *testing.T) {
	ss := sigstoretest.New(t)
	tok := static(ss.Token(sigstoretest.Workflow("acme/packages", "publish.yml")))
	st, err := sigbundle.NewStatement("registry.example/charts/alpha", digest, sigbundle.SignPredicate, nil)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(file string) error {
		s, err := keyless.New(context.Background(), tok, keyless.WithFulcio(ss.FulcioURL), keyless.WithRekor(ss.RekorURL), keyless.WithTrustedRootFile(file))
		if err != nil {
			return err
		}
		_, err = s.Sign(context.Background(), st)
		return err
	}
	if err := sign(ss.TrustedRoot(t.TempDir())); err != nil {
		t.Errorf("Sign with its own Sigstore's trusted root: %v", err)
	}
	if err := sign(sigstoretest.New(t).TrustedRoot(t.TempDir())); err == nil || !strings.Contains(err.Error(), "(Fulcio "+ss.FulcioURL+", Rekor "+ss.RekorURL+") does not verify against the trusted root") {
		t.Errorf("Sign with another Sigstore's trusted root = %v, want a refusal naming the instances", err)
	}
	if err := sign("/nonexistent/trusted_root.json"); err == nil || !strings.Contains(err.Error(), "/nonexistent/trusted_root.json") {
		t.Errorf("New with a missing trusted root = %v, want an error naming the file", err)
	}
}
