package keyless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// TokenSource returns an OIDC ID token (a JWT) whose audience is Sigstore.
type TokenSource func(context.Context) (string, error)

// The environment Token reads: KBUILD_OIDC_TOKEN, a token given as is;
// else the variables GitHub Actions sets in a job with permissions
// id-token: write.
const (
	TokenEnv           = "KBUILD_OIDC_TOKEN"
	GitHubRequestURL   = "ACTIONS_ID_TOKEN_REQUEST_URL"
	GitHubRequestToken = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
)

// Audience is the audience Fulcio accepts in a token.
const Audience = "sigstore"

// ErrNoToken is returned when the environment offers no way to an OIDC
// token.
var ErrNoToken = errors.New("keyless signing needs an OIDC token: run in GitHub Actions in a job with permissions id-token: write (which sets " + GitHubRequestURL + " and " + GitHubRequestToken + "), or set " + TokenEnv)

// Token returns the token source the environment getenv reads offers:
// KBUILD_OIDC_TOKEN as is, or a token for the audience sigstore from
// GitHub Actions' token endpoint (asked anew on each call: its tokens
// live minutes), through client (nil: http.DefaultClient). It is
// ErrNoToken when neither is set.
func Token(getenv func(string) string, client *http.Client) (TokenSource, error) {
	if tok := strings.TrimSpace(getenv(TokenEnv)); tok != "" {
		return func(context.Context) (string, error) { return tok, nil }, nil
	}
	reqURL, reqTok := getenv(GitHubRequestURL), getenv(GitHubRequestToken)
	if reqURL == "" || reqTok == "" {
		return nil, ErrNoToken
	}
	if client == nil {
		client = http.DefaultClient
	}
	u, err := url.Parse(reqURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", GitHubRequestURL, err)
	}
	q := u.Query()
	q.Set("audience", Audience)
	u.RawQuery = q.Encode()
	return func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+reqTok)
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return "", fmt.Errorf("OIDC token from GitHub Actions: %w", err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if err != nil {
			return "", fmt.Errorf("OIDC token from GitHub Actions: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("OIDC token from GitHub Actions: %s: %s; does the job have permissions id-token: write?", resp.Status, strings.TrimSpace(string(body)))
		}
		var v struct {
			Value string `json:"value"`
		}
		if err := json.Unmarshal(body, &v); err != nil || v.Value == "" {
			return "", fmt.Errorf("OIDC token from GitHub Actions: want a JSON object with a value, got %d bytes", len(body))
		}
		return v.Value, nil
	}, nil
}

// FromEnv returns a Signer whose tokens come from the environment getenv
// reads (Token): what kbuild build --keyless and publish --keyless use.
func FromEnv(ctx context.Context, getenv func(string) string, opts ...Option) (*Signer, error) {
	tokens, err := Token(getenv, nil)
	if err != nil {
		return nil, err
	}
	return New(ctx, tokens, opts...)
}
