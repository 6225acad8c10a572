//! Discovery: the protected resource metadata (RFC 9728) of the server, then the metadata of
//! its authorization server (RFC 8414, OpenID Connect Discovery), in the specification's
//! order, each checked against what it was fetched for.

use std::time::Duration;

use super::challenge::Challenge;
use super::error::{cut, AuthError};
use super::net::Net;

/// Deadline of the whole discovery, however many well-known locations are tried.
pub const DISCOVERY_DEADLINE: Duration = Duration::from_secs(30);

/// The protected resource metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// Where it was fetched.
    pub url: String,
    /// Its `resource`.
    pub resource: String,
    /// Its `authorization_servers`.
    pub authorization_servers: Vec<String>,
    /// Its `scopes_supported`, when given.
    pub scopes_supported: Option<Vec<String>>,
    /// Its `dpop_signing_alg_values_supported` (RFC 9449 §5.2 of RFC 9728).
    pub dpop_algs: Vec<String>,
    /// Its `dpop_bound_access_tokens_required`.
    pub dpop_required: bool,
}

impl ResourceMetadata {
    /// Whether the resource server says it takes DPoP-bound tokens.
    pub fn speaks_dpop(&self) -> bool {
        self.dpop_required || !self.dpop_algs.is_empty()
    }
}

/// The authorization server metadata Maven uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerMetadata {
    /// Where it was fetched (`None`: the 2025-03-26 default endpoints, no metadata).
    pub url: Option<String>,
    /// Its `issuer`.
    pub issuer: String,
    /// `authorization_endpoint` (http or https).
    pub authorization_endpoint: String,
    /// `token_endpoint`.
    pub token_endpoint: String,
    /// `registration_endpoint`.
    pub registration_endpoint: Option<String>,
    /// `revocation_endpoint`.
    pub revocation_endpoint: Option<String>,
    /// `scopes_supported`.
    pub scopes_supported: Option<Vec<String>>,
    /// `token_endpoint_auth_methods_supported` (default `client_secret_basic`).
    pub token_endpoint_auth_methods: Vec<String>,
    /// `client_id_metadata_document_supported`.
    pub cimd_supported: bool,
    /// `authorization_response_iss_parameter_supported` (RFC 9207).
    pub iss_parameter_supported: bool,
    /// `dpop_signing_alg_values_supported` (RFC 9449).
    pub dpop_algs: Vec<String>,
    /// An OpenID provider: its metadata came from an OpenID configuration location, lists
    /// `consent` in `prompt_values_supported`, has `id_token_signing_alg_values_supported` or
    /// the `openid` scope (then `offline_access` needs `prompt=consent`, OpenID Connect Core
    /// §11).
    pub openid: bool,
}

impl ServerMetadata {
    /// Whether the AS binds tokens to an ES256 DPoP key.
    pub fn dpop_es256(&self) -> bool {
        self.dpop_algs.iter().any(|a| a == "ES256")
    }
}

/// What discovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    /// The protected resource metadata (`None` for a 2025-03-26 server without it).
    pub resource: Option<ResourceMetadata>,
    /// The authorization server.
    pub server: ServerMetadata,
    /// The challenge's `scope`, if any.
    pub challenge_scope: Option<Vec<String>>,
    /// The challenge offered the `DPoP` scheme.
    pub challenge_dpop: bool,
}

impl Discovered {
    /// Whether the resource server takes DPoP-bound tokens: its metadata says so, or its
    /// challenge offers the `DPoP` scheme.
    pub fn resource_speaks_dpop(&self) -> bool {
        self.challenge_dpop
            || self
                .resource
                .as_ref()
                .is_some_and(ResourceMetadata::speaks_dpop)
    }

    /// The `resource` parameter: the metadata's resource, else the server URL.
    pub fn resource_indicator(&self, server_url: &str) -> String {
        self.resource
            .as_ref()
            .map(|r| r.resource.clone())
            .unwrap_or_else(|| server_url.to_owned())
    }
}

/// The well-known protected resource metadata locations of a server URL, in the
/// specification's order: path-inserted first, then the root.
pub fn resource_metadata_locations(server_url: &str) -> Vec<String> {
    let Ok(u) = url::Url::parse(server_url) else {
        return Vec::new();
    };
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    let mut out = Vec::new();
    if !path.is_empty() {
        out.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    out.push(format!("{origin}/.well-known/oauth-protected-resource"));
    out
}

/// The well-known authorization server metadata locations of an issuer, in the
/// specification's order (RFC 8414 path insertion, OpenID Connect path insertion, OpenID
/// Connect path appending).
pub fn server_metadata_locations(issuer: &str) -> Vec<String> {
    let Ok(u) = url::Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// The resource match rule: the metadata's `resource` has the server URL's origin, and its
/// path is the server's path or a prefix of it at a `/` boundary.
pub fn resource_matches(resource: &str, server_url: &str) -> bool {
    let (Ok(r), Ok(s)) = (url::Url::parse(resource), url::Url::parse(server_url)) else {
        return false;
    };
    if r.origin() != s.origin() || r.query().is_some() || r.fragment().is_some() {
        return false;
    }
    let rp = r.path().trim_end_matches('/');
    let sp = s.path().trim_end_matches('/');
    rp.is_empty() || sp == rp || sp.starts_with(&format!("{rp}/"))
}

fn strings(v: &serde_json::Value, key: &str) -> Option<Vec<String>> {
    v.get(key).and_then(|a| a.as_array()).map(|a| {
        a.iter()
            .filter_map(|s| s.as_str())
            .take(256)
            .map(|s| s.chars().take(256).collect())
            .collect()
    })
}

fn string(v: &serde_json::Value, key: &str) -> Option<String> {
    v.get(key).and_then(|s| s.as_str()).map(str::to_owned)
}

const PRM: &str = "protected resource metadata";
const ASM: &str = "authorization server metadata";

fn parse_resource(
    url: &str,
    v: &serde_json::Value,
    server_url: &str,
) -> Result<ResourceMetadata, AuthError> {
    let resource = string(v, "resource").ok_or_else(|| AuthError::Malformed {
        what: PRM,
        reason: "no resource".to_owned(),
    })?;
    if !resource_matches(&resource, server_url) {
        return Err(AuthError::ResourceMismatch {
            resource: cut(&resource),
            server: cut(server_url),
        });
    }
    let authorization_servers = strings(v, "authorization_servers").unwrap_or_default();
    if authorization_servers.is_empty() {
        return Err(AuthError::Malformed {
            what: PRM,
            reason: "no authorization_servers".to_owned(),
        });
    }
    Ok(ResourceMetadata {
        url: url.to_owned(),
        resource,
        authorization_servers,
        scopes_supported: strings(v, "scopes_supported"),
        dpop_algs: strings(v, "dpop_signing_alg_values_supported").unwrap_or_default(),
        dpop_required: v
            .get("dpop_bound_access_tokens_required")
            .and_then(|b| b.as_bool())
            .unwrap_or(false),
    })
}

/// Fetch the protected resource metadata: the challenge's URL when it gave one (a refusal or
/// failure there is an error, never a reason to try elsewhere), else the well-known
/// locations. `Ok(None)`: none exists (a 2025-03-26 server).
async fn fetch_resource(
    net: &Net,
    challenge: &Challenge,
    server_url: &str,
) -> Result<Option<ResourceMetadata>, AuthError> {
    if let Some(url) = &challenge.resource_metadata {
        let parsed = url::Url::parse(url).map_err(|e| AuthError::BadResourceMetadataUrl {
            url: cut(url),
            reason: e.to_string(),
        })?;
        net.check(PRM, parsed.as_str())
            .map_err(|e| AuthError::BadResourceMetadataUrl {
                url: cut(url),
                reason: e.to_string(),
            })?;
        let a = net.get(PRM, url).await?;
        if !a.status.is_success() {
            return Err(AuthError::Malformed {
                what: PRM,
                reason: format!("HTTP {} at {}", a.status.as_u16(), cut(url)),
            });
        }
        return parse_resource(url, &a.json(PRM)?, server_url).map(Some);
    }
    for url in resource_metadata_locations(server_url) {
        let a = net.get(PRM, &url).await?;
        if a.status.is_success() {
            return parse_resource(&url, &a.json(PRM)?, server_url).map(Some);
        }
    }
    Ok(None)
}

fn parse_server(
    url: &str,
    issuer: &str,
    v: &serde_json::Value,
) -> Result<ServerMetadata, AuthError> {
    let found = string(v, "issuer").unwrap_or_default();
    if found != issuer {
        return Err(AuthError::IssuerMismatch {
            expected: cut(issuer),
            found: cut(&found),
        });
    }
    let need = |key: &str| {
        string(v, key).ok_or_else(|| AuthError::Malformed {
            what: ASM,
            reason: format!("no {key}"),
        })
    };
    let authorization_endpoint = need("authorization_endpoint")?;
    check_authorization_endpoint(&authorization_endpoint)?;
    let token_endpoint = need("token_endpoint")?;
    let methods = strings(v, "code_challenge_methods_supported").unwrap_or_default();
    if !methods.iter().any(|m| m == "S256") {
        return Err(AuthError::NoPkceS256 {
            issuer: cut(issuer),
        });
    }
    Ok(ServerMetadata {
        url: Some(url.to_owned()),
        issuer: issuer.to_owned(),
        authorization_endpoint,
        token_endpoint,
        registration_endpoint: string(v, "registration_endpoint"),
        revocation_endpoint: string(v, "revocation_endpoint"),
        scopes_supported: strings(v, "scopes_supported"),
        token_endpoint_auth_methods: strings(v, "token_endpoint_auth_methods_supported")
            .unwrap_or_else(|| vec!["client_secret_basic".to_owned()]),
        cimd_supported: v
            .get("client_id_metadata_document_supported")
            .and_then(|b| b.as_bool())
            .unwrap_or(false),
        iss_parameter_supported: v
            .get("authorization_response_iss_parameter_supported")
            .and_then(|b| b.as_bool())
            .unwrap_or(false),
        dpop_algs: strings(v, "dpop_signing_alg_values_supported").unwrap_or_default(),
        // An OpenID provider often serves its metadata at the RFC 8414 location too: what
        // OpenID Connect Discovery requires of it (ID token algorithms, the `openid` scope)
        // says it is one as well.
        openid: url.contains("/.well-known/openid-configuration")
            || strings(v, "prompt_values_supported")
                .is_some_and(|p| p.iter().any(|x| x == "consent"))
            || v.get("id_token_signing_alg_values_supported").is_some()
            || strings(v, "scopes_supported").is_some_and(|p| p.iter().any(|x| x == "openid")),
    })
}

/// The authorization endpoint is shown to the owner's browser: http or https only, checked
/// before anything is shown.
pub fn check_authorization_endpoint(url: &str) -> Result<(), AuthError> {
    let refuse = |reason: String| AuthError::Endpoint {
        what: "authorization endpoint",
        url: cut(url),
        reason,
    };
    let u = url::Url::parse(url).map_err(|e| refuse(format!("not a URL: {e}")))?;
    match u.scheme() {
        "https" | "http" => {}
        other => return Err(refuse(format!("scheme {other:?} is refused"))),
    }
    if u.host().is_none() || !u.username().is_empty() || u.password().is_some() {
        return Err(refuse("no host, or credentials in the URL".to_owned()));
    }
    Ok(())
}

/// Fetch the metadata of an authorization server.
async fn fetch_server(net: &Net, issuer: &str) -> Result<ServerMetadata, AuthError> {
    let parsed = url::Url::parse(issuer).map_err(|e| AuthError::Malformed {
        what: ASM,
        reason: format!("issuer {:?} is not a URL: {e}", cut(issuer)),
    })?;
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(AuthError::Malformed {
            what: ASM,
            reason: format!("issuer {:?} has a query or fragment", cut(issuer)),
        });
    }
    for url in server_metadata_locations(issuer) {
        let a = net.get(ASM, &url).await?;
        if a.status.is_success() {
            return parse_server(&url, issuer, &a.json(ASM)?);
        }
    }
    Err(AuthError::NoServerMetadata {
        issuer: cut(issuer),
    })
}

/// A 2025-03-26 server without protected resource metadata: its origin is the authorization
/// server, with metadata at the root or else the default endpoints.
async fn legacy_server(net: &Net, server_url: &str) -> Result<ServerMetadata, AuthError> {
    let u = url::Url::parse(server_url).map_err(|e| AuthError::Malformed {
        what: ASM,
        reason: e.to_string(),
    })?;
    let origin = u.origin().ascii_serialization();
    let url = format!("{origin}/.well-known/oauth-authorization-server");
    let a = net.get(ASM, &url).await?;
    if a.status.is_success() {
        return parse_server(&url, &origin, &a.json(ASM)?);
    }
    Ok(ServerMetadata {
        url: None,
        issuer: origin.clone(),
        authorization_endpoint: format!("{origin}/authorize"),
        token_endpoint: format!("{origin}/token"),
        registration_endpoint: Some(format!("{origin}/register")),
        revocation_endpoint: None,
        scopes_supported: None,
        token_endpoint_auth_methods: vec!["client_secret_basic".to_owned()],
        cimd_supported: false,
        iss_parameter_supported: false,
        dpop_algs: Vec::new(),
        openid: false,
    })
}

/// The whole discovery, within [`DISCOVERY_DEADLINE`].
pub(crate) async fn discover(
    net: &Net,
    server_url: &str,
    challenge: &Challenge,
) -> Result<Discovered, AuthError> {
    let run = async {
        let resource = fetch_resource(net, challenge, server_url).await?;
        let server = match &resource {
            Some(r) => {
                // The first authorization server listed (the specification leaves the choice
                // to the client).
                let issuer = r.authorization_servers.first().cloned().unwrap_or_default();
                fetch_server(net, &issuer).await?
            }
            None => legacy_server(net, server_url).await?,
        };
        // Every endpoint Maven will send to is judged now, before anything is shown to the
        // owner.
        net.check("token endpoint", &server.token_endpoint)?;
        if let Some(u) = &server.registration_endpoint {
            net.check("registration endpoint", u)?;
        }
        if let Some(u) = &server.revocation_endpoint {
            net.check("revocation endpoint", u)?;
        }
        Ok(Discovered {
            resource,
            server,
            challenge_scope: challenge.scope.as_ref().map(|_| challenge.scopes()),
            challenge_dpop: challenge.offers_dpop(),
        })
    };
    tokio::time::timeout(DISCOVERY_DEADLINE, run)
        .await
        .map_err(|_| AuthError::Timeout {
            what: "discovery",
            url: String::new(),
            secs: DISCOVERY_DEADLINE.as_secs(),
        })?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_order() {
        assert_eq!(
            resource_metadata_locations("https://a.example/public/mcp"),
            [
                "https://a.example/.well-known/oauth-protected-resource/public/mcp",
                "https://a.example/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_locations("https://a.example/"),
            ["https://a.example/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_metadata_order() {
        assert_eq!(
            server_metadata_locations("https://as.example/tenant1"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            server_metadata_locations("https://as.example"),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn resource_match_table() {
        let s = "https://a.example/api/mcp";
        for (r, ok) in [
            ("https://a.example/api/mcp", true),
            ("https://a.example/api/mcp/", true),
            ("https://a.example/api", true),
            ("https://a.example", true),
            ("https://a.example/", true),
            ("https://a.example/ap", false),
            ("https://a.example/api/mcp2", false),
            ("https://a.example/other", false),
            ("http://a.example/api/mcp", false),
            ("https://a.example:444/api/mcp", false),
            ("https://b.example/api/mcp", false),
            ("not a url", false),
        ] {
            assert_eq!(resource_matches(r, s), ok, "{r}");
        }
    }

    #[test]
    fn authorization_endpoint_schemes() {
        assert!(check_authorization_endpoint("https://as.example/authorize").is_ok());
        for bad in [
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "https://user:pw@as.example/a",
        ] {
            assert!(
                matches!(
                    check_authorization_endpoint(bad),
                    Err(AuthError::Endpoint { .. })
                ),
                "{bad}"
            );
        }
    }
}
