//! Hostile Wyoming services (`testenv/wyoming_hostile.py`): each gets the specific error, in
//! bounded time, and nothing else.

use std::time::Duration;

use tokio::time::Instant;
use wyoming::{AudioFormat, ClientLimits, Error};

use crate::support::{client, hostile, secs, Loopback};

#[derive(Clone, Copy, Debug)]
enum Ask {
    Describe,
    Transcribe,
    Synthesize,
    /// `Client::speak`, streamed.
    Speak,
    /// `Client::speak`, one `synthesize` per sentence.
    SpeakEach,
}

/// The error `what` meets at the hostile service `mode`, and how long the exchange took.
async fn ask_timed(mode: &str, what: Ask, limits: ClientLimits) -> (Error, f64) {
    let peer = hostile(mode);
    let mut c = client(&peer, limits).await;
    let t = Instant::now();
    let second = vec![0u8; 32_000];
    let result = match what {
        Ask::Describe => c.describe().await.map(|i| format!("{i:?}")),
        Ask::Transcribe => c
            .transcribe(&second, AudioFormat::SPEECH, Some("en"))
            .await
            .map(|t| format!("{t:?}")),
        Ask::Synthesize => c
            .synthesize("Hello.", None)
            .await
            .map(|s| format!("{} bytes", s.pcm.len())),
        Ask::Speak | Ask::SpeakEach => {
            let streaming = matches!(what, Ask::Speak);
            async {
                let mut s = c.speak("Hello. Goodbye.", None, streaming).await?;
                let mut bytes = 0;
                while let Some((_, piece)) = s.next().await? {
                    bytes += piece.len();
                }
                Ok(format!("{bytes} bytes"))
            }
            .await
        }
    };
    match result {
        Ok(got) => panic!("{mode}: {what:?} succeeded with {got}"),
        Err(e) => (e, secs(t)),
    }
}

async fn ask(mode: &str, what: Ask, limits: ClientLimits) -> Error {
    ask_timed(mode, what, limits).await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_hostile_service_gets_its_own_error_in_bounded_time() {
    let short = ClientLimits {
        event: wyoming::Limits {
            timeout: Duration::from_secs(1),
            ..wyoming::Limits::default()
        },
        answer: Duration::from_secs(2),
        audio_bytes: 1024 * 1024,
        events: 1000,
        ..ClientLimits::default()
    };
    let table: &[(&str, Ask, &str)] = &[
        ("huge-header", Ask::Describe, "a Wyoming header line is longer than 65536 bytes"),
        (
            "huge-payload",
            Ask::Synthesize,
            "a Wyoming event announced a payload of 2147483648 bytes, more than the 4194304 allowed",
        ),
        (
            "endless-chunks",
            Ask::Synthesize,
            "the Wyoming peer sent more than 1048576 bytes for synthesized audio",
        ),
        (
            "endless-events",
            Ask::Transcribe,
            "the Wyoming peer sent more than 1000 events for a `transcript`",
        ),
        ("trickle", Ask::Transcribe, "no `transcript` after the audio within 2s"),
        ("silent", Ask::Describe, "no whole Wyoming event within 1s"),
        (
            "wrong-format",
            Ask::Synthesize,
            "unsupported audio: 96000 Hz, 4 bytes per sample, 2 channels; 16-bit samples (width 2), 1 or 2 channels, 8000 to 48000 Hz are taken",
        ),
        (
            "format-change",
            Ask::Synthesize,
            "unsupported audio: a chunk of 16000 Hz, 2 bytes per sample, 1 channel in audio that started as 22050 Hz, 2 bytes per sample, 1 channel",
        ),
        (
            "truncated",
            Ask::Synthesize,
            "the Wyoming peer closed the connection in the middle of an event's payload",
        ),
        (
            "close",
            Ask::Synthesize,
            "the Wyoming peer closed the connection before synthesized audio",
        ),
        (
            "endless-chunks",
            Ask::Speak,
            "the Wyoming peer sent more than 1048576 bytes for synthesized audio",
        ),
        ("trickle", Ask::Speak, "no synthesized audio within 2s"),
        ("silent", Ask::SpeakEach, "no whole Wyoming event within 1s"),
        (
            "wrong-format",
            Ask::Speak,
            "unsupported audio: 96000 Hz, 4 bytes per sample, 2 channels; 16-bit samples (width 2), 1 or 2 channels, 8000 to 48000 Hz are taken",
        ),
        (
            "format-change",
            Ask::SpeakEach,
            "unsupported audio: a chunk of 16000 Hz, 2 bytes per sample, 1 channel in audio that started as 22050 Hz, 2 bytes per sample, 1 channel",
        ),
        (
            "sentence-format-change",
            Ask::Speak,
            "unsupported audio: a sentence of 16000 Hz, 2 bytes per sample, 1 channel after one of 22050 Hz, 2 bytes per sample, 1 channel",
        ),
        (
            "sentence-format-change",
            Ask::SpeakEach,
            "unsupported audio: a sentence of 16000 Hz, 2 bytes per sample, 1 channel after one of 22050 Hz, 2 bytes per sample, 1 channel",
        ),
        (
            "truncated",
            Ask::SpeakEach,
            "the Wyoming peer closed the connection in the middle of an event's payload",
        ),
        (
            "close",
            Ask::SpeakEach,
            "the Wyoming peer closed the connection before synthesized audio",
        ),
        (
            "error",
            Ask::Transcribe,
            "the Wyoming service reported an error: \"model not loaded\" (code \"no-model\")",
        ),
    ];
    for (mode, what, want) in table {
        let (err, took) = ask_timed(mode, *what, short).await;
        assert_eq!(err.to_string(), *want, "{mode}: {err:?}");
        // Every bound is at most the 2 s of the answer.
        assert!(took < 3.5, "{mode} took {took:.1} s");
    }

    let err = ask("garbage", Ask::Describe, short).await;
    assert!(
        matches!(&err, Error::Malformed { part: "header", reason } if reason.starts_with("not JSON (")),
        "{err:?}"
    );
    assert!(ask("silent", Ask::Synthesize, short).await.is_timeout());
    // A service's own words are kept short.
    let Error::Service { text, code: None } = ask("error-flood", Ask::Describe, short).await else {
        panic!("not a service error")
    };
    assert_eq!(text.chars().count(), 501);
    assert!(text.ends_with('…'));
    assert!(ask("huge-payload", Ask::Transcribe, short)
        .await
        .is_too_big());
}

#[tokio::test]
async fn connect_failures_are_named_and_tcp_goes_through_the_dialer() {
    let limits = ClientLimits::default();
    // Nothing listens on port 1 of the loopback.
    let nobody = wyoming::Address::parse("tcp://127.0.0.1:1").unwrap();
    let err = wyoming::Client::connect(&nobody, &Loopback, limits)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot connect to the Wyoming service at tcp://127.0.0.1:1"
    );
    assert!(std::error::Error::source(&err).is_some());

    // The dialer decides: the tests' refuses anything but loopback, and nothing is dialled.
    let lan = wyoming::Address::parse("tcp://10.0.0.1:10300").unwrap();
    let err = wyoming::Client::connect(&lan, &Loopback, limits)
        .await
        .unwrap_err();
    let cause = std::error::Error::source(&err).unwrap().to_string();
    assert_eq!(cause, "the tests dial loopback only, not 10.0.0.1");

    let dir = tempfile::tempdir().unwrap();
    let missing = wyoming::Address::Unix(dir.path().join("none.sock"));
    let err = wyoming::Client::connect(&missing, &Loopback, limits)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err:?}");

    // Audio that is not whole samples is refused before anything is sent.
    let peer = crate::support::hostile("silent");
    let mut c = client(&peer, limits).await;
    let err = c
        .transcribe(&[0; 3], AudioFormat::SPEECH, None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "unsupported audio: 3 bytes of 16000 Hz, 2 bytes per sample, 1 channel is not a whole number of samples"
    );
}

#[tokio::test]
async fn a_receiver_waits_for_an_event_as_long_as_asked_and_reads_it_within_the_deadline() {
    let limits = ClientLimits {
        event: wyoming::Limits {
            timeout: Duration::from_millis(200),
            ..wyoming::Limits::default()
        },
        ..ClientLimits::default()
    };
    // Silence longer than the event deadline is only a wait, cancelled and taken up again.
    let peer = hostile("silent");
    let (mut tx, mut rx) = client(&peer, limits).await.into_split();
    tx.send(wyoming::Message::Describe).await.unwrap();
    for _ in 0..2 {
        let waited = tokio::time::timeout(Duration::from_millis(500), rx.receive()).await;
        assert!(waited.is_err(), "{waited:?}");
    }
    // An event cut short is named; an error event is the service's error.
    let peer = hostile("truncated");
    let (mut tx, mut rx) = client(&peer, limits).await.into_split();
    tx.send(wyoming::Message::Describe).await.unwrap();
    let err = rx.receive().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the Wyoming peer closed the connection in the middle of an event's payload"
    );
    let peer = hostile("error");
    let (mut tx, mut rx) = client(&peer, limits).await.into_split();
    tx.send(wyoming::Message::Describe).await.unwrap();
    assert!(matches!(rx.receive().await, Err(Error::Service { .. })));
}
