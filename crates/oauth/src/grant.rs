//! What the grants that need no person are made of (the block's `oauth.grant`): the grant,
//! where a given token comes from, and the client's private key for `private_key_jwt`
//! assertions (RFC 7523 §2.2). `machine` makes the grants. No token, assertion or key is
//! in a `Debug`.

use std::path::PathBuf;
use std::sync::Arc;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, RsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING, RSA_PKCS1_SHA256,
};

use crate::error::AuthError;

/// `grant_type` of RFC 7523's JWT bearer grant.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of RFC 8693's token exchange.
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The ID-JAG token type (the enterprise-managed authorization extension).
pub(crate) const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The ID token type of RFC 8693.
pub(crate) const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
/// `client_assertion_type` of RFC 7523 §2.2.
pub(crate) const CLIENT_ASSERTION_TYPE: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long a client assertion Maven signs is valid.
const ASSERTION_LIFETIME: u64 = 60;
/// Largest token file read (a workload token, an ID token).
pub(crate) const TOKEN_FILE_CAP: u64 = 64 * 1024;
/// Largest private key file read.
pub(crate) const KEY_FILE_CAP: u64 = 64 * 1024;

/// Longest token given to Maven accepted (as long as the longest access token accepted).
const MAX_GIVEN_TOKEN: usize = 16 * 1024;

/// Where a token given to Maven (a workload's token, the owner's ID token) comes from.
#[derive(Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// A file, read at each use (so a token rotated on disk is the one sent).
    File(PathBuf),
    /// This value (the conformance client's, handed to it by the suite).
    Value(String),
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenSource::File(p) => f.debug_tuple("File").field(p).finish(),
            TokenSource::Value(_) => f.write_str("Value(***)"),
        }
    }
}

impl TokenSource {
    /// The token now: the file read again (bounded, one line of visible ASCII).
    pub fn read(&self, what: &'static str) -> Result<String, AuthError> {
        let text = match self {
            TokenSource::Value(v) => v.clone(),
            TokenSource::File(p) => read_small(p, TOKEN_FILE_CAP).map_err(|reason| {
                AuthError::Grant(format!("{what} file {}: {reason}", p.display()))
            })?,
        };
        let t = text.trim();
        if t.is_empty()
            || t.len() > MAX_GIVEN_TOKEN
            || !t.bytes().all(|b| (0x21..=0x7e).contains(&b))
        {
            return Err(AuthError::Grant(format!(
                "the {what} is empty, longer than {} KiB or not one token of visible ASCII",
                MAX_GIVEN_TOKEN / 1024
            )));
        }
        Ok(t.to_owned())
    }
}

fn read_small(p: &std::path::Path, cap: u64) -> Result<String, String> {
    use std::io::Read as _;
    let f = std::fs::File::open(p).map_err(|e| e.to_string())?;
    let mut out = String::new();
    f.take(cap + 1)
        .read_to_string(&mut out)
        .map_err(|e| e.to_string())?;
    if out.len() as u64 > cap {
        return Err(format!("larger than {} KiB", cap / 1024));
    }
    Ok(out)
}

/// The identity provider of the enterprise-managed flow.
#[derive(Clone, PartialEq, Eq)]
pub struct Enterprise {
    /// Its token endpoint, where the ID token is exchanged for an ID-JAG.
    pub token_endpoint: String,
    /// The client Maven is at the identity provider.
    pub client_id: String,
    /// Its secret there, if it has one (then `client_secret_basic`).
    pub client_secret: Option<String>,
    /// The owner's ID token from the identity provider.
    pub id_token: TokenSource,
}

impl std::fmt::Debug for Enterprise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Enterprise")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .field("id_token", &self.id_token)
            .finish()
    }
}

/// How this server's tokens are obtained (`oauth.grant`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Grant {
    /// The owner authorizes on the authorization server's page (the code flow with PKCE).
    #[default]
    AuthorizationCode,
    /// The client's own credentials (`client_credentials`): its secret, or its private key.
    ClientCredentials,
    /// Enterprise-managed: token exchange at the identity provider, then jwt-bearer.
    Enterprise(Enterprise),
    /// A workload's token presented as a jwt-bearer grant.
    JwtBearer(TokenSource),
}

impl Grant {
    /// Its word in the configuration (`oauth.grant`), as `mcp status` shows it.
    pub fn as_str(&self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
            Grant::Enterprise(_) => "enterprise",
            Grant::JwtBearer(_) => "jwt_bearer",
        }
    }

    /// Whether it needs the owner (the code flow) or runs by itself.
    pub fn needs_owner(&self) -> bool {
        matches!(self, Grant::AuthorizationCode)
    }
}

/// Where the client's private key comes from.
#[derive(Debug)]
pub(crate) enum KeySource {
    /// Given.
    Loaded(Arc<ClientKey>),
    /// A PKCS#8 PEM file, and the `kid` to name.
    File { path: PathBuf, kid: Option<String> },
}

/// A private key that signs the client's `private_key_jwt` assertions (RFC 7523 §2.2): PKCS#8
/// PEM, an EC P-256 key (ES256) or an RSA key of 2048 bits or more (RS256); `kid` as given.
pub struct ClientKey {
    signer: Signer,
    kid: Option<String>,
}

enum Signer {
    Es256(EcdsaKeyPair),
    Rs256(RsaKeyPair),
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientKey")
            .field("alg", &self.alg())
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl ClientKey {
    /// The key of a PKCS#8 PEM text (`-----BEGIN PRIVATE KEY-----`).
    pub fn from_pem(pem: &str, kid: Option<String>) -> Result<ClientKey, AuthError> {
        let bad = |r: &str| AuthError::Grant(format!("the private key is unusable: {r}"));
        let begin = "-----BEGIN PRIVATE KEY-----";
        let end = "-----END PRIVATE KEY-----";
        let start = pem
            .find(begin)
            .ok_or_else(|| bad("not a PKCS#8 PEM (BEGIN PRIVATE KEY)"))?;
        let rest = &pem[start + begin.len()..];
        let stop = rest.find(end).ok_or_else(|| bad("no END PRIVATE KEY"))?;
        let b64: String = rest[..stop]
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let der = STANDARD.decode(b64).map_err(|_| bad("not base64"))?;
        let rng = SystemRandom::new();
        let signer = match EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng) {
            Ok(k) => Signer::Es256(k),
            Err(_) => match RsaKeyPair::from_pkcs8(&der) {
                Ok(k) => Signer::Rs256(k),
                Err(_) => {
                    return Err(bad(
                        "neither an EC P-256 key nor an RSA key of 2048 bits or more",
                    ))
                }
            },
        };
        Ok(ClientKey { signer, kid })
    }

    /// The key in a PEM file (bounded).
    pub fn from_file(path: &std::path::Path, kid: Option<String>) -> Result<ClientKey, AuthError> {
        let text = read_small(path, KEY_FILE_CAP).map_err(|reason| {
            AuthError::Grant(format!("private key file {}: {reason}", path.display()))
        })?;
        ClientKey::from_pem(&text, kid)
    }

    /// `alg` of its signatures.
    pub fn alg(&self) -> &'static str {
        match self.signer {
            Signer::Es256(_) => "ES256",
            Signer::Rs256(_) => "RS256",
        }
    }

    /// A signed JWT of these claims.
    fn sign(&self, claims: &serde_json::Value) -> Result<String, AuthError> {
        let mut header = serde_json::json!({"alg": self.alg(), "typ": "JWT"});
        if let Some(kid) = &self.kid {
            header["kid"] = kid.clone().into();
        }
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = SystemRandom::new();
        let failed = || AuthError::Grant("cannot sign the client assertion".to_owned());
        let sig = match &self.signer {
            Signer::Es256(k) => k
                .sign(&rng, input.as_bytes())
                .map_err(|_| failed())?
                .as_ref()
                .to_vec(),
            Signer::Rs256(k) => {
                let mut sig = vec![0u8; k.public().modulus_len()];
                k.sign(&RSA_PKCS1_SHA256, &rng, input.as_bytes(), &mut sig)
                    .map_err(|_| failed())?;
                sig
            }
        };
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig)))
    }

    /// A client assertion (RFC 7523 §2.2, §3): `iss` and `sub` the client, `aud` the
    /// authorization server's issuer, a fresh `jti`, valid for a minute.
    pub fn assertion(&self, client_id: &str, audience: &str) -> Result<String, AuthError> {
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut jti = [0u8; 16];
        rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut jti);
        self.sign(&serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "iat": iat,
            "exp": iat + ASSERTION_LIFETIME,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{KeyPair as _, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};

    fn pem_of(der: &[u8]) -> String {
        let b64 = STANDARD.encode(der);
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap_or_default())
            .collect();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        )
    }

    fn part(jwt: &str, i: usize) -> serde_json::Value {
        let p = jwt.split('.').nth(i).unwrap_or_default();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).unwrap_or_default()).unwrap_or_default()
    }

    #[test]
    fn a_client_assertion_is_signed_by_the_key_and_names_the_client_and_the_issuer() {
        let rng = SystemRandom::new();
        let doc =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("generate");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, doc.as_ref(), &rng)
            .expect("pair");
        let key = ClientKey::from_pem(&pem_of(doc.as_ref()), Some("k1".to_owned())).expect("key");
        assert_eq!(key.alg(), "ES256");
        let jwt = key
            .assertion("client-a", "https://as.example")
            .expect("assertion");
        let (header, claims) = (part(&jwt, 0), part(&jwt, 1));
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["kid"], "k1");
        assert_eq!(claims["iss"], "client-a");
        assert_eq!(claims["sub"], "client-a");
        assert_eq!(claims["aud"], "https://as.example");
        let (iat, exp) = (claims["iat"].as_u64(), claims["exp"].as_u64());
        assert_eq!(exp.zip(iat).map(|(e, i)| e - i), Some(ASSERTION_LIFETIME));
        let other = key
            .assertion("client-a", "https://as.example")
            .expect("again");
        assert_ne!(
            part(&other, 1)["jti"],
            claims["jti"],
            "a fresh jti each time"
        );
        let (input, sig) = jwt.rsplit_once('.').unwrap_or_default();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, pair.public_key().as_ref())
            .verify(
                input.as_bytes(),
                &URL_SAFE_NO_PAD.decode(sig).unwrap_or_default(),
            )
            .expect("verifies with the public key");
        assert!(
            !format!("{key:?}").contains("BEGIN"),
            "no key in Debug: {key:?}"
        );
    }

    #[test]
    fn an_unusable_key_is_refused_by_name() {
        for (pem, want) in [
            ("hello", "not a PKCS#8 PEM"),
            ("-----BEGIN PRIVATE KEY-----\nAAAA", "no END PRIVATE KEY"),
            (
                "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----",
                "not base64",
            ),
            (
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
                "neither an EC P-256 key nor an RSA key",
            ),
        ] {
            let e = ClientKey::from_pem(pem, None).expect_err("refused");
            assert!(e.to_string().contains(want), "{e} for {pem:?}");
        }
        let e = ClientKey::from_file(std::path::Path::new("/nonexistent/key.pem"), None)
            .expect_err("no file");
        assert!(
            e.to_string()
                .starts_with("private key file /nonexistent/key.pem: "),
            "{e}"
        );
    }

    #[test]
    fn a_token_file_is_read_again_at_each_use_and_bounded() {
        let dir = std::env::temp_dir().join(format!(
            "oauth-grant-{}-{}",
            std::process::id(),
            ASSERTION_LIFETIME
        ));
        std::fs::create_dir_all(&dir).expect("dir");
        let f = dir.join("token");
        let source = TokenSource::File(f.clone());
        std::fs::write(&f, "first.jwt.token\n").expect("write");
        assert_eq!(
            source.read("workload token").expect("read"),
            "first.jwt.token"
        );
        std::fs::write(&f, "second.jwt.token").expect("write");
        assert_eq!(
            source.read("workload token").expect("read"),
            "second.jwt.token",
            "a token rotated on disk is the one sent"
        );
        for (text, want) in [
            ("", "is empty"),
            ("two tokens", "not one token of visible ASCII"),
        ] {
            std::fs::write(&f, text).expect("write");
            let e = source.read("workload token").expect_err("refused");
            assert!(e.to_string().contains(want), "{e}");
        }
        std::fs::write(&f, vec![b'a'; 70 * 1024]).expect("write");
        let e = source.read("workload token").expect_err("too large");
        assert!(e.to_string().contains("larger than 64 KiB"), "{e}");
        assert_eq!(
            format!("{:?}", TokenSource::Value("secret".to_owned())),
            "Value(***)"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
