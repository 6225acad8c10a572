//! A tiny scripted HTTP/1.1 responder on loopback: one request per connection, the test's
//! handler decides every answer, and every request is logged with its headers.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) at: Instant,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What to answer.
pub(crate) enum Reply {
    /// Status, headers, body (Content-Length set).
    Full(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// 200 with a chunked body that never ends: a few bytes every 50 ms.
    Endless,
}

impl Reply {
    pub(crate) fn ok(body: impl Into<Vec<u8>>) -> Reply {
        Reply::Full(
            200,
            vec![("Content-Type", "application/rss+xml".into())],
            body.into(),
        )
    }
    pub(crate) fn status(code: u16) -> Reply {
        Reply::Full(code, vec![], Vec::new())
    }
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    log: Arc<Mutex<Vec<Seen>>>,
    handler: Arc<Mutex<Arc<Handler>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// A server on 127.0.0.1.
    pub(crate) async fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_on(IpAddr::V4(Ipv4Addr::LOCALHOST), handler).await
    }

    /// A server on one loopback address.
    #[expect(
        clippy::disallowed_methods,
        reason = "a test peer, not a door of Maven's"
    )]
    pub(crate) async fn start_on(
        ip: IpAddr,
        handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Mutex<Arc<Handler>>> = Arc::new(Mutex::new(Arc::new(handler)));
        let (l, h) = (log.clone(), handler.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (l, h) = (l.clone(), h.clone());
                tokio::spawn(async move {
                    let _ = serve(sock, l, h).await;
                });
            }
        });
        Server {
            addr,
            log,
            handler,
            task,
        }
    }

    /// Replaces the handler.
    pub(crate) fn set(&self, handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) {
        *self.handler.lock().unwrap() = Arc::new(handler);
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn requests(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }

    pub(crate) fn count(&self) -> usize {
        self.log.lock().unwrap().len()
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "the test's own server and deadline, outside the poller's clock"
)]
async fn serve(
    mut sock: TcpStream,
    log: Arc<Mutex<Vec<Seen>>>,
    handler: Arc<Mutex<Arc<Handler>>>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 64 * 1024 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let path = request_line.split(' ').nth(1).unwrap_or("/").to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let seen = Seen {
        path,
        headers,
        at: Instant::now(),
    };
    log.lock().unwrap().push(seen.clone());
    let h = handler.lock().unwrap().clone();
    match h(&seen) {
        Reply::Full(code, headers, body) => {
            let mut out = format!(
                "HTTP/1.1 {code} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            sock.write_all(out.as_bytes()).await?;
            // A client that refuses the body early closes; that is fine.
            let _ = sock.write_all(&body).await;
        }
        Reply::Endless => {
            sock.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\nTransfer-Encoding: chunked\r\n\r\n",
            )
            .await?;
            let start = b"<?xml version=\"1.0\"?><rss><channel>";
            sock.write_all(format!("{:x}\r\n", start.len()).as_bytes())
                .await?;
            sock.write_all(start).await?;
            sock.write_all(b"\r\n").await?;
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                sock.write_all(b"1\r\n \r\n").await?;
            }
        }
    }
    let _ = sock.shutdown().await;
    Ok(())
}

/// An RSS 2.0 document with these items: (guid, title, days before an hour ago).
pub(crate) fn rss(items: &[(&str, &str, i64)]) -> String {
    rss_with(items, "")
}

/// An RSS document with extra channel elements (e.g. `<ttl>60</ttl>`).
pub(crate) fn rss_with(items: &[(&str, &str, i64)], channel_extra: &str) -> String {
    let base = time::OffsetDateTime::now_utc() - time::Duration::hours(1);
    let mut s = format!(
        "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Test</title><link>https://example.org/</link>{channel_extra}"
    );
    for (guid, title, days) in items {
        let d = base - time::Duration::days(*days);
        let date = d
            .format(&time::format_description::well_known::Rfc2822)
            .unwrap();
        s.push_str(&format!(
            "<item><guid isPermaLink=\"false\">{guid}</guid><title>{title}</title><link>https://example.org/{guid}</link><description>About {title}</description><pubDate>{date}</pubDate></item>"
        ));
    }
    s.push_str("</channel></rss>");
    s
}
