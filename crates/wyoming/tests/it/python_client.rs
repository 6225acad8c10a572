//! The reference library (PyPI `wyoming`, `testenv/wyoming_client.py`) as the client Home
//! Assistant would be, against `wyoming::server::serve` with a small conversation agent; and
//! hostile clients of it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use wyoming::events::{Attribution, Model, Program};
use wyoming::server::{serve, Answer, Handler, ServerLimits};
use wyoming::{Info, Transcript};

use crate::support::{installed, testenv, voice_python, Loopback};

/// Knows the inbox and the feeds, in English and Russian; nothing else.
struct Agent {
    streaming: bool,
    heard: Mutex<Vec<Transcript>>,
}

impl Handler for Agent {
    fn info(&self) -> Info {
        let attribution = Attribution {
            name: "Maven".into(),
            url: "https://example.org/maven".into(),
        };
        Info {
            handle: vec![Program {
                name: "maven".into(),
                attribution: attribution.clone(),
                installed: true,
                description: Some("Maven, a personal assistant".into()),
                version: Some("0.1.0".into()),
                models: vec![Model {
                    name: "maven".into(),
                    attribution,
                    installed: true,
                    description: None,
                    version: Some("0.1.0".into()),
                    languages: vec!["en".into(), "ru".into()],
                }],
                supports_handled_streaming: self.streaming,
                ..Program::default()
            }],
            ..Info::default()
        }
    }

    async fn handle(&self, t: Transcript) -> Answer {
        let text = t.text.to_lowercase();
        self.heard.lock().unwrap().push(t);
        let (handled, text) = if text.contains("inbox") || text.contains("in box") {
            (true, "You have two tasks in your inbox.")
        } else if text.contains("due") {
            (
                true,
                "Two are due. The first, today; the second?\nTomorrow.",
            )
        } else if text.contains("лентах") {
            (true, "В лентах ничего нового.")
        } else {
            (false, "I cannot help with that.")
        };
        Answer {
            handled,
            text: text.into(),
            context: None,
        }
    }
}

/// Serves `agent` on 127.0.0.1; returns the `tcp://` URI.
#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
async fn start(agent: Arc<Agent>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let agent = agent.clone();
            tokio::spawn(async move {
                let _ = serve(stream, &*agent, &ServerLimits::default()).await;
            });
        }
    });
    format!("tcp://127.0.0.1:{port}")
}

/// `wyoming_client.py URI ARGS…`'s JSON, or its exit code and stderr.
async fn python(uri: &str, args: &[&str]) -> Result<Value, String> {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(voice_python())
            .arg(installed(&testenv().join("wyoming_client.py")))
            .arg(uri)
            .args(args)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the Python client did not finish within 60 s")
    .unwrap();
    if !out.status.success() {
        return Err(format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_library_describes_and_converses_with_our_server() {
    let agent = Arc::new(Agent {
        streaming: false,
        heard: Mutex::new(Vec::new()),
    });
    let uri = start(agent.clone()).await;

    let handle = python(&uri, &["describe"]).await.unwrap();
    assert_eq!(handle[0]["name"], "maven");
    assert_eq!(handle[0]["models"][0]["languages"], json!(["en", "ru"]));
    assert_eq!(handle[0]["supports_handled_streaming"], false);

    let events = python(&uri, &["transcript", "List tasks in box.", "en", "c-1"]).await;
    assert_eq!(
        events.unwrap(),
        json!([{"type": "handled", "data": {"text": "You have two tasks in your inbox.", "context": {"conversation_id": "c-1"}}}])
    );

    let events = python(&uri, &["transcript", "Что нового в лентах?", "ru", "c-2"]).await;
    assert_eq!(
        events.unwrap(),
        json!([{"type": "handled", "data": {"text": "В лентах ничего нового.", "context": {"conversation_id": "c-2"}}}])
    );

    let events = python(
        &uri,
        &["transcript", "Open the pod bay doors.", "en", "c-3"],
    )
    .await;
    assert_eq!(
        events.unwrap(),
        json!([{"type": "not-handled", "data": {"text": "I cannot help with that.", "context": {"conversation_id": "c-3"}}}])
    );

    let heard = agent.heard.lock().unwrap().clone();
    assert_eq!(heard.len(), 3);
    assert_eq!(heard[1].text, "Что нового в лентах?");
    assert_eq!(heard[1].language.as_deref(), Some("ru"));
    assert_eq!(heard[1].context.as_ref().unwrap()["conversation_id"], "c-2");

    // A line that is not JSON gets an error event that says why, and the connection ends.
    let reply = python(&uri, &["garbage"]).await.unwrap();
    assert_eq!(reply["type"], "error");
    assert_eq!(reply["data"]["code"], "bad-event");
    let text = reply["data"]["text"].as_str().unwrap();
    assert!(
        text.starts_with("malformed Wyoming header: not JSON ("),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_agent_answers_in_handled_chunks() {
    let agent = Arc::new(Agent {
        streaming: true,
        heard: Mutex::new(Vec::new()),
    });
    let uri = start(agent).await;
    let handle = python(&uri, &["describe"]).await.unwrap();
    assert_eq!(handle[0]["supports_handled_streaming"], true);
    let events = python(&uri, &["transcript", "What is in my inbox?", "en", "c-9"])
        .await
        .unwrap();
    // The stream, then the plain `handled` Home Assistant's agent reads.
    assert_eq!(
        events,
        json!([
            {"type": "handled-start", "data": {"context": {"conversation_id": "c-9"}}},
            {"type": "handled-chunk", "data": {"text": "You have two tasks in your inbox."}},
            {"type": "handled-stop", "data": {}},
            {"type": "handled", "data": {"text": "You have two tasks in your inbox.", "context": {"conversation_id": "c-9"}}},
        ])
    );
    // An answer of several sentences: a chunk each, joined they are the whole text.
    let events = python(&uri, &["transcript", "What is due?", "en", "c-11"])
        .await
        .unwrap();
    let chunks: Vec<&str> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "handled-chunk")
        .map(|e| e["data"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        chunks,
        [
            "Two are due. ",
            "The first, today; ",
            "the second?\n",
            "Tomorrow."
        ]
    );
    assert_eq!(events[6]["type"], "handled");
    assert_eq!(events[6]["data"]["text"], chunks.concat());
    // Not handled is never streamed.
    let events = python(&uri, &["transcript", "Sing.", "en", "c-10"])
        .await
        .unwrap();
    assert_eq!(events[0]["type"], "not-handled");
}

#[tokio::test]
#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
async fn our_server_bounds_and_answers_what_it_does_not_take() {
    let agent = Arc::new(Agent {
        streaming: false,
        heard: Mutex::new(Vec::new()),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let limits = ServerLimits {
        idle: Duration::from_millis(500),
        ..ServerLimits::default()
    };
    let served = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        serve(stream, &*agent, &limits).await
    });
    let address = wyoming::Address::parse(&format!("tcp://127.0.0.1:{port}")).unwrap();
    let mut c = wyoming::Client::connect(&address, &Loopback, wyoming::ClientLimits::default())
        .await
        .unwrap();
    assert_eq!(c.describe().await.unwrap().handle[0].name, "maven");
    c.send(wyoming::Message::Ping(wyoming::events::Ping {
        text: Some("p".into()),
    }))
    .await
    .unwrap();
    assert_eq!(
        c.receive().await.unwrap(),
        Some(wyoming::Message::Pong(wyoming::events::Ping {
            text: Some("p".into())
        }))
    );
    c.send(wyoming::Message::Synthesize(wyoming::events::Synthesize {
        text: "x".into(),
        voice: None,
    }))
    .await
    .unwrap();
    let Some(wyoming::Message::Error(e)) = c.receive().await.unwrap() else {
        panic!("no error event")
    };
    assert_eq!(e.text, "this service does not take `synthesize` events");
    // An idle client is let go.
    let err = served.await.unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "no next event from the Wyoming client within 500ms"
    );
}

#[tokio::test]
#[expect(
    clippy::disallowed_methods,
    reason = "a test peer, not a door of Maven's"
)]
async fn a_hostile_client_gets_an_error_event_and_the_connection_ends() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let table: &[(&[u8], &str)] = &[
        (
            &[b'{'; 70_000],
            "a Wyoming header line is longer than 65536 bytes",
        ),
        (
            b"{\"type\":\"transcript\",\"payload_length\":2147483648}\n",
            "a Wyoming event announced a payload of 2147483648 bytes, more than the 65536 allowed",
        ),
        (
            b"{\"type\":\"transcript\",\"data\":{\"language\":\"en\"}}\n",
            "a Wyoming `transcript` event is malformed: missing field `text`",
        ),
    ];
    for (bytes, want) in table {
        let agent = Agent {
            streaming: false,
            heard: Mutex::new(Vec::new()),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let served = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            serve(stream, &agent, &ServerLimits::default()).await
        });
        let mut raw = wyoming::Dialer::dial(&Loopback, "127.0.0.1", port)
            .await
            .unwrap();
        raw.write_all(bytes).await.unwrap();
        raw.shutdown().await.unwrap();
        let err = served.await.unwrap().unwrap_err();
        assert_eq!(err.to_string(), *want);
        let mut reply = Vec::new();
        raw.read_to_end(&mut reply).await.unwrap();
        let mut r = tokio::io::BufReader::new(&reply[..]);
        let event = wyoming::read_event(&mut r, &wyoming::Limits::default())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(event.kind, "error");
        assert_eq!(event.data["text"], *want);
    }
}
