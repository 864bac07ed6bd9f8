package identity

import (
	"fmt"
	"strings"
)

// ResourceMetadataPath is where a protected resource publishes its OAuth
// metadata (RFC 9728 §3), which the MCP authorization spec has clients
// read after a 401 to learn how to sign in.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// ResourceMetadata is the RFC 9728 protected resource metadata document.
// AuthorizationServers is empty unless OIDC is configured: then API keys
// sent as bearer tokens are the only way in, and Description says so in
// words a client can show its user.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	// Description is not an RFC 9728 parameter (additional ones are
	// allowed): how to authenticate, for a person.
	Description string `json:"description"`
}

// issuerer is a TokenVerifier that names its issuer (OIDC).
type issuerer interface{ Issuer() string }

// Issuer returns the OIDC issuer bearer tokens are accepted from, or "" when
// only API keys are.
func (a *Authenticator) Issuer() string {
	if a == nil || a.Tokens == nil {
		return ""
	}
	if i, ok := a.Tokens.(issuerer); ok {
		return i.Issuer()
	}
	return ""
}

// Metadata returns the protected resource metadata of resource (a URL, the
// server's origin or its MCP endpoint).
func (a *Authenticator) Metadata(resource string) ResourceMetadata {
	md := ResourceMetadata{Resource: resource, BearerMethodsSupported: []string{"header"}, ResourceName: "Toolsmith"}
	keys := fmt.Sprintf("Send an API key in the Authorization header: \"Bearer %s…\". "+
		"An admin creates one with `toolsmith keys create` or POST /api/v1/admin/keys. "+
		"Without a credential you act as an anonymous guest.", SecretPrefix)
	if iss := a.Issuer(); iss != "" {
		md.AuthorizationServers = []string{iss}
		md.Description = keys + " OpenID Connect tokens issued by " + iss + " are accepted too."
		return md
	}
	md.Description = keys + " No OAuth authorization server is configured: API keys are the only way to sign in."
	return md
}

// Challenge returns the WWW-Authenticate value of a 401 (RFC 6750 §3 with
// RFC 9728 §5.1's resource_metadata): metadataURL tells the client where to
// read how to sign in, and cause, the failure of a credential that was
// sent, becomes error="invalid_token" with its description. An empty cause
// (no credential at all) carries no error code, as RFC 6750 asks.
func Challenge(metadataURL string, cause error) string {
	v := `Bearer realm="toolsmith", resource_metadata="` + quotable(metadataURL) + `"`
	if cause != nil {
		v += `, error="invalid_token", error_description="` + quotable(cause.Error()) + `"`
	}
	return v
}

// quotable keeps the characters RFC 6750 allows in a quoted parameter
// (printable ASCII without '"' and '\'); others become '?'.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '?'
		}
		return r
	}, s)
}
