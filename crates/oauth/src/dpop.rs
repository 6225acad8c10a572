//! DPoP (RFC 9449): an ES256 key of Maven's own, and the proofs that bind a token to it. A
//! stolen token is useless without the key. The key is kept with the credentials (PKCS#8),
//! so a restart keeps the tokens usable.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair as _, ECDSA_P256_SHA256_FIXED_SIGNING};
use sha2::{Digest, Sha256};

use super::error::AuthError;

/// A DPoP key.
pub struct DpopKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    rng: SystemRandom,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey(ES256)")
    }
}

impl DpopKey {
    /// A fresh key.
    pub fn generate() -> Result<DpopKey, AuthError> {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| AuthError::Store("cannot generate a DPoP key".to_owned()))?;
        DpopKey::from_pkcs8(doc.as_ref())
    }

    /// A key kept as PKCS#8.
    pub fn from_pkcs8(pkcs8: &[u8]) -> Result<DpopKey, AuthError> {
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8, &rng)
            .map_err(|_| AuthError::Store("the stored DPoP key is unusable".to_owned()))?;
        Ok(DpopKey {
            pair,
            pkcs8: pkcs8.to_vec(),
            rng,
        })
    }

    /// The key as PKCS#8, to store.
    pub fn pkcs8(&self) -> &[u8] {
        &self.pkcs8
    }

    /// The public key as a JWK.
    pub fn jwk(&self) -> serde_json::Value {
        let point = self.pair.public_key().as_ref();
        // Uncompressed SEC1 point: 0x04 || X (32) || Y (32).
        let (x, y) = if point.len() == 65 {
            (&point[1..33], &point[33..65])
        } else {
            (&point[..0], &point[..0])
        };
        serde_json::json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(x),
            "y": URL_SAFE_NO_PAD.encode(y),
        })
    }

    /// A proof for one request: `htm` the method, `htu` the URL without query and fragment,
    /// `ath` the hash of the access token when one is presented, `nonce` the server's.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let htu = htu(url);
        let header = serde_json::json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk()});
        let mut jti = [0u8; 16];
        rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut jti);
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut claims = serde_json::json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": htu,
            "iat": iat,
        });
        if let Some(t) = access_token {
            claims["ath"] = URL_SAFE_NO_PAD.encode(Sha256::digest(t.as_bytes())).into();
        }
        if let Some(n) = nonce {
            claims["nonce"] = n.into();
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let sig = self
            .pair
            .sign(&self.rng, signing_input.as_bytes())
            .map_err(|_| AuthError::Store("cannot sign a DPoP proof".to_owned()))?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(sig.as_ref())
        ))
    }
}

/// `htu`: the URL without its query and fragment (RFC 9449 §4.2).
fn htu(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};

    #[test]
    fn a_proof_verifies_with_its_own_jwk_and_carries_the_claims() {
        let key = DpopKey::generate().expect("key");
        let again = DpopKey::from_pkcs8(key.pkcs8()).expect("reload");
        assert_eq!(key.jwk(), again.jwk());
        let proof = key
            .proof(
                "POST",
                "https://rs.example/mcp?x=1#f",
                Some("tok"),
                Some("n1"),
            )
            .expect("proof");
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).expect("b64")).expect("json");
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).expect("b64")).expect("json");
        assert_eq!(header["typ"], "dpop+jwt");
        assert!(header["jwk"].get("d").is_none());
        assert_eq!(claims["htu"], "https://rs.example/mcp");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["nonce"], "n1");
        assert_eq!(
            claims["ath"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok"))
        );
        let mut point = vec![4u8];
        for c in ["x", "y"] {
            point.extend(
                URL_SAFE_NO_PAD
                    .decode(header["jwk"][c].as_str().expect("str"))
                    .expect("b64"),
            );
        }
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).expect("b64");
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .expect("verifies");
        let other = key
            .proof("POST", "https://rs.example/mcp", None, None)
            .expect("proof");
        assert_ne!(
            proof.split('.').nth(1),
            other.split('.').nth(1),
            "fresh jti"
        );
    }
}
