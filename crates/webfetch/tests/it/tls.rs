//! HTTPS against a loopback server whose CA is made at test time (W-11).

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use webfetch::{Fetcher, Kind};

use crate::support::*;

struct Pki {
    ca_der: Vec<u8>,
    acceptor: tokio_rustls::TlsAcceptor,
}

/// A CA and a server certificate for `name` signed by it.
fn pki(name: &str) -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec![name.to_string()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(leaf.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )
        .unwrap();
    Pki {
        ca_der: ca.der().to_vec(),
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
    }
}

fn tls_fetcher(resolver: Scripted, ca: Option<&[u8]>) -> Fetcher {
    let mut b = Fetcher::builder(private_door()).resolver(resolver);
    if let Some(ca) = ca {
        b = b.add_root_certificate(ca).unwrap();
    }
    b.build()
}

#[tokio::test]
async fn https_with_a_test_ca_and_keep_alive() {
    let pki = pki("maven.test");
    let server = serve_tls(LOOPBACK, Some(pki.acceptor.clone()), ok_path).await;
    let resolver = Scripted::new(&[("maven.test", &[&["127.0.0.1"]])]);
    let f = tls_fetcher(resolver, Some(&pki.ca_der));
    let url = format!("https://maven.test:{}/secure", server.port());
    for _ in 0..3 {
        let resp = f.get(&url).await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.bytes().await.unwrap(), "/secure");
    }
    assert_eq!(server.conns(), 1);
}

#[tokio::test]
async fn untrusted_or_wrong_certificates_are_tls_errors() {
    let pki = pki("maven.test");
    let server = serve_tls(LOOPBACK, Some(pki.acceptor.clone()), ok_path).await;
    let port = server.port();
    let resolver = || {
        Scripted::new(&[
            ("maven.test", &[&["127.0.0.1"]]),
            ("other.test", &[&["127.0.0.1"]]),
        ])
    };
    // Not trusted: only the webpki roots.
    let err = tls_fetcher(resolver(), None)
        .get(&format!("https://maven.test:{port}/"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Kind::Tls, "{err}");
    // Trusted CA, wrong name.
    let err = tls_fetcher(resolver(), Some(&pki.ca_der))
        .get(&format!("https://other.test:{port}/"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), Kind::Tls, "{err}");
    assert!(err.to_string().starts_with("tls: other.test: "), "{err}");
}

#[test]
fn a_bad_root_is_refused_at_build_time() {
    let err = Fetcher::builder(private_door())
        .add_root_certificate(b"not a certificate")
        .unwrap_err();
    assert_eq!(err.kind(), Kind::Tls);
}

/// A server that accepts the connection but never speaks TLS: the TLS deadline passes.
#[tokio::test(start_paused = true)]
async fn tls_handshake_deadline() {
    let server = serve(LOOPBACK, |_| async { Reply::Mute }).await;
    let mut d = private_door();
    d.timeouts.tls = std::time::Duration::from_secs(4);
    let f = Fetcher::builder(d).build();
    let err = f
        .get(&format!("https://127.0.0.1:{}/", server.port()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            webfetch::Error::Timeout {
                phase: webfetch::Phase::Tls,
                ..
            }
        ),
        "{err}"
    );
}
