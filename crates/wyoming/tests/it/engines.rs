//! Real engines: Piper speaks through our client, faster-whisper hears through it, openWakeWord
//! hears a wake word in it; people reading (Debian's pocketsphinx-testdata) are heard, and the
//! end of each reading is found where it ends.

use std::time::Duration;

use tokio::time::Instant;
use wyoming::audio::{self, Endpoint, EndpointConfig, Endpointer};
use wyoming::{AudioFormat, ClientLimits};

use crate::support::{client, engine_on_tcp, engine_on_unix, installed, secs, testenv, word_match};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piper_speech_is_transcribed_by_faster_whisper() {
    let piper = engine_on_tcp("run-wyoming-piper.sh");
    let whisper = engine_on_unix("run-wyoming-whisper.sh");

    let info = client(&piper, ClientLimits::default())
        .await
        .describe()
        .await
        .unwrap();
    let voices: Vec<_> = info
        .tts
        .iter()
        .flat_map(|p| &p.voices)
        .map(|v| v.name.as_str())
        .collect();
    assert!(voices.contains(&"en_US-joe-medium"), "{voices:?}");
    let info = client(&whisper, ClientLimits::default())
        .await
        .describe()
        .await
        .unwrap();
    assert_eq!(info.asr[0].name, "faster-whisper");
    assert!(info.asr[0].models[0].languages.iter().any(|l| l == "en"));

    let sentence = "Please list the tasks in my inbox and read me the latest news.";
    let t = Instant::now();
    let speech = client(&piper, ClientLimits::default())
        .await
        .synthesize(sentence, None)
        .await
        .unwrap();
    let tts_secs = secs(t);
    assert_eq!(
        speech.format,
        AudioFormat {
            rate: 22050,
            width: 2,
            channels: 1
        }
    );
    let spoken = speech.pcm.len() as f64 / speech.format.bytes_per_second() as f64;
    assert!((1.5..10.0).contains(&spoken), "{spoken} s of speech");

    // As Piper speaks it (22050 Hz) and as Maven sends it (16 kHz, through the WAV writer and
    // reader), whisper hears the sentence.
    let pcm16 = audio::to_speech(speech.format, &speech.pcm).unwrap();
    let wav = audio::write_wav(AudioFormat::SPEECH, &pcm16).unwrap();
    let (format, pcm16) = audio::read_wav(&wav).unwrap();
    for (format, pcm) in [(speech.format, &speech.pcm[..]), (format, pcm16)] {
        let t = Instant::now();
        let transcript = client(&whisper, ClientLimits::default())
            .await
            .transcribe(pcm, format, Some("en"))
            .await
            .unwrap_or_else(|e| panic!("{e}; whisper's stderr:\n{}", whisper.stderr()));
        let m = word_match(sentence, &transcript.text);
        assert!(
            m >= 0.8,
            "heard {:?} for {sentence:?} ({m})",
            transcript.text
        );
        println!(
            "timing: piper {tts_secs:.2} s for {spoken:.1} s of speech; faster-whisper {:.2} s at {format}",
            secs(t)
        );
    }

    // The utterance ends where Piper's speech does, once silence follows it.
    let mut e = Endpointer::new(AudioFormat::SPEECH, EndpointConfig::default()).unwrap();
    assert!(matches!(
        e.push(pcm16),
        Endpoint::Speaking | Endpoint::Ended { .. }
    ));
    let silence = vec![0u8; 32_000];
    let Endpoint::Ended { speech_end_ms } = e.push(&silence) else {
        panic!("no end after a second of silence")
    };
    let length_ms = (pcm16.len() / 32) as u64;
    assert!(
        speech_end_ms <= length_ms + 30 && speech_end_ms + 1000 > length_ms,
        "{speech_end_ms} of {length_ms}"
    );

    // A live utterance: a "microphone" of silence, the sentence and more silence, streamed in
    // tenths of a second while the transcript is awaited on the other half; the end of the
    // utterance (the endpointer) ends the audio, before the recording does.
    let mut mic = vec![0u8; 16_000];
    mic.extend_from_slice(pcm16);
    mic.extend(vec![0u8; 64_000]);
    let (mut tx, mut rx) = client(&whisper, ClientLimits::default()).await.into_split();
    let sending = tokio::spawn(async move {
        let header = wyoming::events::AudioHeader::of(AudioFormat::SPEECH);
        tx.send(wyoming::Message::Transcribe(wyoming::events::Transcribe {
            language: Some("en".into()),
            ..Default::default()
        }))
        .await?;
        tx.send(wyoming::Message::AudioStart(header)).await?;
        let mut e = Endpointer::new(AudioFormat::SPEECH, EndpointConfig::default()).unwrap();
        let mut sent = 0;
        for (i, piece) in mic.chunks(3200).enumerate() {
            let header = wyoming::events::AudioHeader {
                timestamp: Some(i as u64 * 100),
                ..header
            };
            tx.send(wyoming::Message::AudioChunk(header, piece.to_vec()))
                .await?;
            sent += piece.len();
            if let Endpoint::Ended { speech_end_ms } = e.push(piece) {
                tx.send(wyoming::Message::AudioStop(wyoming::events::AudioStop {
                    timestamp: Some(speech_end_ms),
                }))
                .await?;
                return Ok::<_, wyoming::Error>((sent, mic.len()));
            }
        }
        panic!("the utterance did not end");
    });
    let transcript = loop {
        match rx.receive().await.unwrap() {
            Some(wyoming::Message::Transcript(t)) => break t,
            Some(_) => {}
            None => panic!("whisper closed before the transcript"),
        }
    };
    let (sent, recorded) = sending.await.unwrap().unwrap();
    assert!(
        sent < recorded,
        "the whole recording was sent ({sent} bytes)"
    );
    let m = word_match(sentence, &transcript.text);
    assert!(
        m >= 0.8,
        "heard {:?} for {sentence:?} ({m})",
        transcript.text
    );

    // One connection serves one exchange after another.
    let mut c = client(&piper, ClientLimits::default()).await;
    for text in ["One.", "Two."] {
        assert!(!c.synthesize(text, None).await.unwrap().pcm.is_empty());
    }
}

/// The LibriVox readings' transcription lines: `<s> words </s> (file-id)`.
fn librivox() -> Vec<(String, std::path::PathBuf)> {
    let dir = installed(&testenv().join("speech/librivox"));
    let text = std::fs::read_to_string(dir.join("transcription")).unwrap();
    text.lines()
        .filter_map(|l| {
            let words = l.strip_prefix("<s> ")?.split(" </s> (").next()?.to_owned();
            let id = l.rsplit_once('(')?.1.strip_suffix(')')?;
            Some((words, dir.join(format!("{id}.wav"))))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_reading_are_transcribed_by_faster_whisper() {
    let whisper = engine_on_unix("run-wyoming-whisper.sh");
    let readings = librivox();
    assert_eq!(readings.len(), 5, "{readings:?}");
    let limits = ClientLimits {
        answer: Duration::from_secs(60),
        ..ClientLimits::default()
    };
    let mut total = 0.0;
    for (expected, wav) in &readings {
        let bytes = std::fs::read(wav).unwrap();
        let (format, pcm) = audio::read_wav(&bytes).unwrap();
        assert_eq!(format, AudioFormat::SPEECH);
        let t = Instant::now();
        let heard = client(&whisper, limits)
            .await
            .transcribe(pcm, format, Some("en"))
            .await
            .unwrap();
        let m = word_match(expected, &heard.text);
        println!(
            "{:.2} s: {:?} for {expected:?} ({m:.2})",
            secs(t),
            heard.text
        );
        assert!(m >= 0.6, "heard {:?} for {expected:?} ({m})", heard.text);
        total += m;
    }
    assert!(
        total / readings.len() as f64 >= 0.8,
        "mean word match {}",
        total / 5.0
    );

    // "go forward ten meters", raw 16 kHz S16_LE: whisper writes digits.
    let raw = std::fs::read(installed(&testenv().join("speech/goforward.raw"))).unwrap();
    let heard = client(&whisper, limits)
        .await
        .transcribe(&raw, AudioFormat::SPEECH, Some("en"))
        .await
        .unwrap();
    let m = word_match("go forward 10 meters", &heard.text);
    assert!(m >= 0.75, "heard {:?} ({m})", heard.text);
}

/// `pcm` (16 kHz mono) streamed to a wake-word service after `detect {names}`, as a microphone
/// would; the first event back within `wait`, or after `audio-stop` once `wait` passed.
async fn listen_for_wake_word(
    wake: &crate::support::Peer,
    names: &[&str],
    pcm: &[u8],
    wait: Duration,
) -> Option<wyoming::Message> {
    let (mut tx, mut rx) = client(wake, ClientLimits::default()).await.into_split();
    tx.send(wyoming::Message::Detect(wyoming::events::Detect {
        names: Some(names.iter().map(|n| (*n).to_owned()).collect()),
    }))
    .await
    .unwrap();
    let header = wyoming::events::AudioHeader::of(AudioFormat::SPEECH);
    tx.send(wyoming::Message::AudioStart(header)).await.unwrap();
    for piece in pcm.chunks(2560) {
        tx.send(wyoming::Message::AudioChunk(header, piece.to_vec()))
            .await
            .unwrap();
    }
    if let Ok(answer) = tokio::time::timeout(wait, rx.receive()).await {
        return answer.unwrap();
    }
    tx.send(wyoming::Message::AudioStop(Default::default()))
        .await
        .unwrap();
    rx.receive().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wake_word_piper_speaks_is_detected_by_openwakeword() {
    let piper = engine_on_unix("run-wyoming-piper.sh");
    let wake = engine_on_tcp("run-wyoming-wake.sh");
    let info = client(&wake, ClientLimits::default())
        .await
        .describe()
        .await
        .unwrap();
    let models: Vec<_> = info
        .wake
        .iter()
        .flat_map(|p| &p.models)
        .map(|m| m.name.as_str())
        .collect();
    assert!(
        models.iter().any(|m| m.starts_with("ok_nabu")),
        "{models:?}"
    );

    let mic = |text: &'static str| {
        let piper = &piper;
        async move {
            let s = client(piper, ClientLimits::default())
                .await
                .synthesize(text, None)
                .await
                .unwrap();
            let mut pcm = vec![0u8; 32_000];
            pcm.extend(audio::to_speech(s.format, &s.pcm).unwrap());
            pcm.extend(vec![0u8; 64_000]);
            pcm
        }
    };
    let said = mic("Okay Nabu, what is new?").await;
    let heard = listen_for_wake_word(&wake, &["ok_nabu"], &said, Duration::from_secs(20)).await;
    let Some(wyoming::Message::Detection(d)) = heard else {
        panic!("no detection: {heard:?}; stderr:\n{}", wake.stderr())
    };
    assert!(
        d.name.as_deref().is_some_and(|n| n.starts_with("ok_nabu")),
        "{d:?}"
    );

    let said = mic("List my tasks, please.").await;
    let heard = listen_for_wake_word(&wake, &["ok_nabu"], &said, Duration::from_secs(3)).await;
    assert_eq!(heard, Some(wyoming::Message::NotDetected));
}

#[test]
fn the_end_of_a_reading_is_found_at_its_end_not_in_its_pauses() {
    for (expected, wav) in librivox() {
        let bytes = std::fs::read(&wav).unwrap();
        let (format, pcm) = audio::read_wav(&bytes).unwrap();
        let length_ms = (pcm.len() / 32) as u64;
        let mut e = Endpointer::new(format, EndpointConfig::default()).unwrap();
        for piece in pcm.chunks(3200) {
            let now = e.push(piece);
            assert!(
                matches!(now, Endpoint::Waiting | Endpoint::Speaking),
                "{now:?} inside {expected:?}"
            );
        }
        let Endpoint::Ended { speech_end_ms } = e.push(&[0u8; 32_000]) else {
            panic!("no end after {expected:?} and a second of silence")
        };
        assert!(
            speech_end_ms <= length_ms && speech_end_ms + 600 >= length_ms,
            "{expected:?} ended at {speech_end_ms} ms of {length_ms}"
        );
    }
}

/// `Client::speak` against wyoming-piper 2.x, which offers streamed text: streamed and one
/// `synthesize` per sentence, the same sentences come back as audio whisper hears, and the
/// first audio of the streamed answer comes before its last sentence is synthesized.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piper_speaks_an_answer_sentence_by_sentence_streamed_or_not() {
    let piper = engine_on_unix("run-wyoming-piper.sh");
    let whisper = engine_on_unix("run-wyoming-whisper.sh");
    let info = client(&piper, ClientLimits::default())
        .await
        .describe()
        .await
        .unwrap();
    assert!(info.tts[0].supports_synthesize_streaming, "{info:?}");
    let text = "About to run clear done. To run it, say: yes, orange. \
                It deletes every task you marked done.";
    for streaming in [true, false] {
        let mut c = client(&piper, ClientLimits::default()).await;
        let t = Instant::now();
        let mut speech = c.speak(text, None, streaming).await.unwrap();
        let (mut pcm, mut first, mut format) = (Vec::new(), None, None);
        while let Some((f, piece)) = speech.next().await.unwrap() {
            first.get_or_insert_with(|| secs(t));
            format = Some(f);
            pcm.extend(piece);
        }
        let whole = secs(t);
        let (format, first) = (format.unwrap(), first.unwrap());
        assert_eq!(format.rate, 22050);
        // Three sentences, each after the one before: the first audio well before the whole.
        assert!(first < whole * 0.8, "first {first} s, whole {whole} s");
        let heard = client(&whisper, ClientLimits::default())
            .await
            .transcribe(
                &audio::to_speech(format, &pcm).unwrap(),
                AudioFormat::SPEECH,
                Some("en"),
            )
            .await
            .unwrap();
        let m = word_match(
            "about to run clear done to run it say yes orange it deletes every task you marked done",
            &heard.text,
        );
        assert!(
            m >= 0.7,
            "streaming {streaming}: heard {:?} ({m})",
            heard.text
        );
        // The connection is left clean: it answers the next exchange.
        assert!(!c.describe().await.unwrap().tts.is_empty());
    }
}
