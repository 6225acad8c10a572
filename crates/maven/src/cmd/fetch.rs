//! `maven fetch URL [--door NAME] [--config PATH] [--json]` (W-12): one GET through a door,
//! printing status, headers and body size, or the refusal with its reason.
//!
//! Exit codes: 0 on a 2xx; 3 when webfetch refused; 1 for any other failure (dns, connect,
//! tls, timeout, too large, non-2xx status); 2 for an unparsable URL.

use crate::exit::{errln, out, outln};
use std::path::Path;
use std::process::ExitCode;

use super::{load_config, runtime};
use crate::exit::EXIT_USAGE;

use serde::Serialize;
use serde_json::Value;
use webfetch::{DoorConfig, Error, Fetcher, HeaderMap, Kind, StatusCode};

/// `maven fetch URL [--door NAME] [--json]`: the configuration's door, then [`run`].
pub(crate) fn main(config: Option<&Path>, url: &str, door: &str, json: bool) -> ExitCode {
    let Some(cfg) = load_config(config) else {
        return ExitCode::from(EXIT_USAGE);
    };
    let door = match door.parse().and_then(|d| cfg.door(&d)) {
        Ok(d) => d,
        Err(e) => {
            errln!("maven fetch: --door {}: {e}", door);
            return ExitCode::from(EXIT_USAGE);
        }
    };
    runtime(run(url, door, json))
}

/// Fetch `url` through `door` and print the outcome (as one JSON object with `json`).
pub(crate) async fn run(url: &str, door: DoorConfig, json: bool) -> ExitCode {
    let outcome = fetch(&Fetcher::new(door), url).await;
    if let Some(Kind::InvalidUrl) = outcome.error.as_ref().map(Error::kind) {
        if let Some(e) = &outcome.error {
            errln!("maven fetch: {}", shown::block(&e.to_string()));
        }
        return ExitCode::from(outcome.exit_code());
    }
    if json {
        outln!("{}", outcome.to_json());
    } else {
        out!("{}", outcome.to_text());
        if let Some(e) = &outcome.error {
            errln!("maven fetch: {}", shown::block(&e.to_string()));
        }
    }
    ExitCode::from(outcome.exit_code())
}

/// `maven fetch --json`: one object (W-12).
#[derive(Debug, Serialize)]
struct Report {
    ok: bool,
    status: Option<u16>,
    /// The error's kind (`refused`, `dns`, `too_large`, …), `null` on success.
    kind: Option<&'static str>,
    reason: Option<String>,
    /// Header name → value, as an object in the server's order.
    #[serde(serialize_with = "as_object")]
    headers: Vec<(String, String)>,
    body_bytes: u64,
}

/// Pairs as one JSON object, in their order.
fn as_object<S: serde::Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// What one fetch came to.
#[derive(Debug)]
struct Outcome {
    status: Option<StatusCode>,
    headers: HeaderMap,
    body_bytes: u64,
    error: Option<Error>,
}

/// GET `url` and read the body to its end (counting it, keeping none of it).
async fn fetch(fetcher: &Fetcher, url: &str) -> Outcome {
    let resp = match fetcher.get(url).await {
        Ok(resp) => resp,
        Err(e) => {
            return Outcome {
                status: None,
                headers: HeaderMap::new(),
                body_bytes: 0,
                error: Some(e),
            }
        }
    };
    let status = resp.status();
    let headers = resp.headers().clone();
    let mut body = resp.into_body();
    let mut error = loop {
        match body.chunk().await {
            Ok(Some(_)) => {}
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    if error.is_none() && !status.is_success() {
        error = Some(Error::Status { status });
    }
    Outcome {
        status: Some(status),
        headers,
        body_bytes: body.received(),
        error,
    }
}

impl Outcome {
    fn exit_code(&self) -> u8 {
        match self.error.as_ref().map(Error::kind) {
            None => 0,
            Some(Kind::Refused) => 3,
            Some(Kind::InvalidUrl) => 2,
            Some(_) => 1,
        }
    }

    /// Header names with their values, in the order the server sent them; a repeated name has
    /// its values joined by ", ".
    fn header_list(&self) -> Vec<(String, String)> {
        self.headers
            .keys()
            .map(|name| {
                let joined = self
                    .headers
                    .get_all(name)
                    .iter()
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ");
                (name.as_str().to_owned(), joined)
            })
            .collect()
    }

    /// The `--json` shape of W-12.
    fn report(&self) -> Report {
        Report {
            ok: self.error.is_none(),
            status: self.status.map(|s| s.as_u16()),
            kind: self.error.as_ref().map(|e| e.kind().as_str()),
            reason: self.error.as_ref().map(ToString::to_string),
            headers: self.header_list(),
            body_bytes: self.body_bytes,
        }
    }

    /// [`Outcome::report`] as JSON.
    fn to_json(&self) -> Value {
        serde_json::to_value(self.report()).unwrap_or(Value::Null)
    }

    /// Status line, headers and body size for a person (the error goes to stderr).
    fn to_text(&self) -> String {
        let Some(status) = self.status else {
            return String::new();
        };
        let mut out = format!("{status}\n");
        for (name, value) in self.header_list() {
            // The remote server wrote the header: shown, never obeyed.
            out.push_str(&format!(
                "{}: {}\n",
                shown::line(&name),
                shown::line(&value)
            ));
        }
        out.push_str(&format!("body: {} bytes\n", self.body_bytes));
        out
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    fn door(allow_private: bool) -> DoorConfig {
        let mut d = DoorConfig::new("fetch");
        d.allow_private = allow_private;
        d.host_interval = Duration::ZERO;
        d
    }

    /// A loopback server that answers every connection once with `reply`.
    #[expect(
        clippy::disallowed_methods,
        reason = "a test peer, not a door of Maven's"
    )]
    async fn server(reply: &'static [u8]) -> String {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(reply).await;
                let _ = s.shutdown().await;
            }
        });
        format!("http://{addr}/")
    }

    #[tokio::test]
    async fn refusal_is_exit_3_with_reason() {
        let o = fetch(&Fetcher::new(door(false)), "http://169.254.169.254/").await;
        assert_eq!(o.exit_code(), 3);
        assert_eq!(
            o.to_json(),
            json!({"ok": false, "status": null, "kind": "refused",
                   "reason": "refused: 169.254.169.254 is link-local (cloud metadata)",
                   "headers": {}, "body_bytes": 0})
        );
        assert_eq!(o.to_text(), "");
    }

    #[tokio::test]
    async fn unparsable_url_is_exit_2() {
        let o = fetch(&Fetcher::new(door(false)), "http://[::1").await;
        assert_eq!(o.exit_code(), 2);
        let o = fetch(&Fetcher::new(door(false)), "gopher://example.org/").await;
        assert_eq!(o.exit_code(), 3, "a scheme is a refusal, not a usage error");
    }

    #[tokio::test]
    async fn success_prints_status_headers_and_size() {
        let url = server(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"a\"\r\nX-Two: 1\r\nX-Two: 2\r\n\r\nhello").await;
        let o = fetch(&Fetcher::new(door(true)), &url).await;
        assert_eq!(o.exit_code(), 0);
        assert_eq!(
            o.to_json(),
            json!({"ok": true, "status": 200, "kind": null, "reason": null,
                   "headers": {"content-length": "5", "etag": "\"a\"", "x-two": "1, 2"},
                   "body_bytes": 5})
        );
        assert_eq!(
            o.to_text(),
            "200 OK\ncontent-length: 5\netag: \"a\"\nx-two: 1, 2\nbody: 5 bytes\n"
        );
    }

    #[tokio::test]
    async fn non_2xx_is_exit_1_kind_http() {
        let url = server(b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnop").await;
        let o = fetch(&Fetcher::new(door(true)), &url).await;
        assert_eq!(o.exit_code(), 1);
        let j = o.to_json();
        assert_eq!(j["status"], 404);
        assert_eq!(j["kind"], "http");
        assert_eq!(j["reason"], "http status 404 Not Found");
        assert_eq!(j["body_bytes"], 3);
    }

    #[tokio::test]
    async fn too_large_is_exit_1() {
        let url = server(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n").await;
        let o = fetch(&Fetcher::new(door(true)), &url).await;
        assert_eq!(o.exit_code(), 1);
        assert_eq!(o.to_json()["kind"], "too_large");
        assert_eq!(
            o.to_json()["reason"],
            "too large: body exceeds 2097152 bytes"
        );
    }
}
