//! Audio helpers: WAV files of PCM, speech's format, and the end of an utterance.
//!
//! [`read_wav`] takes a RIFF/WAVE file of integer PCM (format 1) and refuses every other kind by
//! name; a data chunk longer than the file (what `arecord` writes to a pipe) is read to the end
//! of the file. [`write_wav`] writes one. [`to_speech`] makes 16 kHz mono 16-bit audio (what
//! speech-to-text services take) of 16-bit audio at any rate and one or two channels, by
//! averaging the channels and linear interpolation. [`Endpointer`] finds the end of an
//! utterance: enough loud audio, then enough quiet.

use crate::{AudioFormat, Error};

fn wav_err(reason: impl Into<String>) -> Error {
    Error::Wav {
        reason: reason.into(),
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The format and the PCM of a WAV file of integer PCM (format 1 or its
/// WAVE_FORMAT_EXTENSIBLE form), 1 to 4 bytes per sample.
pub fn read_wav(bytes: &[u8]) -> Result<(AudioFormat, &[u8]), Error> {
    if bytes.get(0..4) != Some(b"RIFF") || bytes.get(8..12) != Some(b"WAVE") {
        return Err(wav_err("it does not begin with RIFF….WAVE"));
    }
    let mut at = 12usize;
    let mut format = None;
    while let (Some(id), Some(len)) = (bytes.get(at..at + 4), u32_at(bytes, at + 4)) {
        let body = at + 8;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        match id {
            b"fmt " => {
                let f = bytes
                    .get(body..body.saturating_add(len))
                    .filter(|f| f.len() >= 16)
                    .ok_or_else(|| wav_err("its fmt chunk is shorter than 16 bytes"))?;
                let tag = u16_at(f, 0).unwrap_or(0);
                let tag = if tag == 0xFFFE {
                    // WAVE_FORMAT_EXTENSIBLE: the sub-format's first two bytes are the tag.
                    u16_at(f, 24).unwrap_or(0)
                } else {
                    tag
                };
                if tag != 1 {
                    return Err(wav_err(format!(
                        "its format tag is {tag}, not 1 (integer PCM)"
                    )));
                }
                let channels = u16_at(f, 2).unwrap_or(0);
                let rate = u32_at(f, 4).unwrap_or(0);
                let bits = u16_at(f, 14).unwrap_or(0);
                if channels == 0 || rate == 0 || bits == 0 || !bits.is_multiple_of(8) || bits > 32 {
                    return Err(wav_err(format!(
                        "{channels} channels, {rate} Hz, {bits} bits per sample is not audio it reads"
                    )));
                }
                format = Some(AudioFormat {
                    rate,
                    width: bits / 8,
                    channels,
                });
            }
            b"data" => {
                let Some(format) = format else {
                    return Err(wav_err("its data chunk comes before its fmt chunk"));
                };
                let data = bytes.get(body..).unwrap_or_default();
                let data = &data[..data.len().min(len)];
                let whole = data.len() / format.frame_bytes() * format.frame_bytes();
                return Ok((format, &data[..whole]));
            }
            _ => {}
        }
        // Chunks are padded to an even length.
        at = body.saturating_add(len).saturating_add(len & 1);
    }
    Err(wav_err(if format.is_some() {
        "it has no data chunk"
    } else {
        "it has no fmt chunk"
    }))
}

/// A WAV file of `pcm` in `format`; refused when the PCM is not whole frames or is larger than a
/// WAV file can say (4 GiB).
pub fn write_wav(format: AudioFormat, pcm: &[u8]) -> Result<Vec<u8>, Error> {
    if format.frame_bytes() == 0 || !pcm.len().is_multiple_of(format.frame_bytes()) {
        return Err(Error::Audio {
            reason: format!(
                "{} bytes is not a whole number of {format} frames",
                pcm.len()
            ),
        });
    }
    let len = u32::try_from(pcm.len())
        .ok()
        .filter(|n| *n <= u32::MAX - 36)
        .ok_or_else(|| Error::Audio {
            reason: format!("{} bytes is too long for a WAV file", pcm.len()),
        })?;
    let byte_rate = u32::try_from(format.bytes_per_second()).map_err(|_| Error::Audio {
        reason: format!("{format} is too fast for a WAV file"),
    })?;
    let mut out = Vec::with_capacity(pcm.len() + 44);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&format.channels.to_le_bytes());
    out.extend_from_slice(&format.rate.to_le_bytes());
    out.extend_from_slice(&byte_rate.to_le_bytes());
    out.extend_from_slice(&(format.width * format.channels).to_le_bytes());
    out.extend_from_slice(&(format.width * 8).to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(pcm);
    Ok(out)
}

fn samples(pcm: &[u8]) -> impl Iterator<Item = i16> + '_ {
    pcm.chunks_exact(2)
        .map(|s| i16::from_le_bytes([s[0], s[1]]))
}

/// `pcm` in `format` as 16 kHz mono 16-bit ([`AudioFormat::SPEECH`]): channels averaged, the
/// rate changed by linear interpolation. Only 16-bit audio of one or two channels is taken.
pub fn to_speech(format: AudioFormat, pcm: &[u8]) -> Result<Vec<u8>, Error> {
    if format.width != 2 || !(1..=2).contains(&format.channels) || format.rate == 0 {
        return Err(Error::Audio {
            reason: format!("{format}; 16-bit audio of 1 or 2 channels is needed"),
        });
    }
    let mono: Vec<i16> = if format.channels == 2 {
        pcm.chunks_exact(4)
            .map(|f| {
                let l = i32::from(i16::from_le_bytes([f[0], f[1]]));
                let r = i32::from(i16::from_le_bytes([f[2], f[3]]));
                // The mean of two i16 is an i16.
                i16::try_from((l + r) / 2).unwrap_or(0)
            })
            .collect()
    } else {
        samples(pcm).collect()
    };
    let target = AudioFormat::SPEECH.rate;
    let out: Vec<i16> = if format.rate == target || mono.is_empty() {
        mono
    } else {
        let n = (mono.len() as u64 * u64::from(target) / u64::from(format.rate)) as usize;
        let step = f64::from(format.rate) / f64::from(target);
        (0..n)
            .map(|i| {
                let pos = i as f64 * step;
                let j = pos as usize;
                let frac = pos - j as f64;
                let a = f64::from(mono.get(j).copied().unwrap_or(0));
                let b = f64::from(
                    mono.get(j + 1)
                        .copied()
                        .unwrap_or(mono.get(j).copied().unwrap_or(0)),
                );
                (a + (b - a) * frac).round() as i16
            })
            .collect()
    };
    Ok(out.iter().flat_map(|s| s.to_le_bytes()).collect())
}

/// How the [`Endpointer`] tells speech from silence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EndpointConfig {
    /// The length of a frame, the unit of the decision. Default 30 ms.
    pub frame_ms: u32,
    /// A frame whose root mean square is above this (on the 16-bit scale) is loud. Default 500
    /// (about −36 dBFS).
    pub threshold: f64,
    /// Loud audio needed, in all, before speech counts as begun. Default 150 ms.
    pub speech_ms: u32,
    /// Quiet audio after speech that ends the utterance. Default 700 ms.
    pub silence_ms: u32,
    /// The most audio before speech begins; then [`Endpoint::NoSpeech`]. Default 15 s.
    pub wait_ms: u32,
    /// The longest utterance; then [`Endpoint::TooLong`]. Default 30 s.
    pub max_ms: u32,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            frame_ms: 30,
            threshold: 500.0,
            speech_ms: 150,
            silence_ms: 700,
            wait_ms: 15_000,
            max_ms: 30_000,
        }
    }
}

/// Where the utterance is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// No speech yet.
    Waiting,
    /// Speech began and has not ended.
    Speaking,
    /// Speech ended: the last loud frame ended `speech_end_ms` after the audio began.
    Ended {
        /// Milliseconds from the start of the audio to the end of the speech.
        speech_end_ms: u64,
    },
    /// No speech within [`EndpointConfig::wait_ms`].
    NoSpeech,
    /// Speech went on past [`EndpointConfig::max_ms`].
    TooLong,
}

/// Finds the end of an utterance in 16-bit mono audio fed in pieces of any size: energy above a
/// threshold is speech, and enough quiet after enough speech ends it. Once it says `Ended`,
/// `NoSpeech` or `TooLong` it says so for every further piece.
#[derive(Clone, Debug)]
pub struct Endpointer {
    config: EndpointConfig,
    frame_bytes: usize,
    rate: u32,
    pending: Vec<u8>,
    frames: u64,
    loud_ms: u64,
    quiet_ms: u64,
    speech_start_ms: Option<u64>,
    last_loud_end_ms: u64,
    state: Endpoint,
}

impl Endpointer {
    /// An endpointer for audio in `format`, which must be 16-bit mono.
    pub fn new(format: AudioFormat, config: EndpointConfig) -> Result<Endpointer, Error> {
        if format.width != 2 || format.channels != 1 || format.rate == 0 || config.frame_ms == 0 {
            return Err(Error::Audio {
                reason: format!("{format}; the end of an utterance is found in 16-bit mono audio"),
            });
        }
        let frame_samples = (u64::from(format.rate) * u64::from(config.frame_ms) / 1000).max(1);
        Ok(Endpointer {
            config,
            frame_bytes: usize::try_from(frame_samples * 2).unwrap_or(usize::MAX),
            rate: format.rate,
            pending: Vec::new(),
            frames: 0,
            loud_ms: 0,
            quiet_ms: 0,
            speech_start_ms: None,
            last_loud_end_ms: 0,
            state: Endpoint::Waiting,
        })
    }

    /// Where the utterance is after `pcm`.
    pub fn push(&mut self, pcm: &[u8]) -> Endpoint {
        if !matches!(self.state, Endpoint::Waiting | Endpoint::Speaking) {
            return self.state;
        }
        self.pending.extend_from_slice(pcm);
        let frame_ms = u64::from(self.config.frame_ms);
        let mut used = 0;
        while self.pending.len() - used >= self.frame_bytes {
            let frame = &self.pending[used..used + self.frame_bytes];
            used += self.frame_bytes;
            let n = frame.len() as f64 / 2.0;
            let energy: f64 = samples(frame).map(|s| f64::from(s) * f64::from(s)).sum();
            let loud = (energy / n).sqrt() > self.config.threshold;
            self.frames += 1;
            let end_ms = self.frames * frame_ms;
            if loud {
                self.loud_ms += frame_ms;
                self.quiet_ms = 0;
                self.last_loud_end_ms = end_ms;
                if self.speech_start_ms.is_none()
                    && self.loud_ms >= u64::from(self.config.speech_ms)
                {
                    self.speech_start_ms = Some(end_ms.saturating_sub(self.loud_ms));
                    self.state = Endpoint::Speaking;
                }
            } else {
                self.quiet_ms += frame_ms;
                if self.speech_start_ms.is_none()
                    && self.quiet_ms >= u64::from(self.config.silence_ms)
                {
                    // A click or a cough: loudness spread over a long quiet does not add up.
                    self.loud_ms = 0;
                }
            }
            self.state = match self.speech_start_ms {
                Some(_) if self.quiet_ms >= u64::from(self.config.silence_ms) => Endpoint::Ended {
                    speech_end_ms: self.last_loud_end_ms,
                },
                Some(start) if end_ms - start > u64::from(self.config.max_ms) => Endpoint::TooLong,
                Some(_) => Endpoint::Speaking,
                None if end_ms > u64::from(self.config.wait_ms) => Endpoint::NoSpeech,
                None => Endpoint::Waiting,
            };
            if !matches!(self.state, Endpoint::Waiting | Endpoint::Speaking) {
                break;
            }
        }
        self.pending.drain(..used);
        self.state
    }

    /// The rate of the audio it takes.
    pub fn rate(&self) -> u32 {
        self.rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(ms: u32, amplitude: f64) -> Vec<u8> {
        let n = 16 * ms as usize;
        (0..n)
            .flat_map(|i| {
                let v = amplitude * (i as f64 * 2.0 * std::f64::consts::PI * 440.0 / 16000.0).sin();
                (v as i16).to_le_bytes()
            })
            .collect()
    }

    #[test]
    fn a_wav_round_trips_and_foreign_ones_are_named() {
        let pcm = tone(100, 1000.0);
        let wav = write_wav(AudioFormat::SPEECH, &pcm).unwrap();
        assert_eq!(read_wav(&wav).unwrap(), (AudioFormat::SPEECH, &pcm[..]));
        // What arecord writes to a pipe: a data length it could not know.
        let mut piped = wav.clone();
        piped[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(read_wav(&piped).unwrap(), (AudioFormat::SPEECH, &pcm[..]));
        let mut float = wav.clone();
        float[20..22].copy_from_slice(&3u16.to_le_bytes());
        let table: [(&[u8], &str); 4] = [
            (
                b"garbage",
                "not a WAV file this reader takes: it does not begin with RIFF….WAVE",
            ),
            (
                &float,
                "not a WAV file this reader takes: its format tag is 3, not 1 (integer PCM)",
            ),
            (
                &wav[..36],
                "not a WAV file this reader takes: it has no data chunk",
            ),
            (
                &wav[..20],
                "not a WAV file this reader takes: its fmt chunk is shorter than 16 bytes",
            ),
        ];
        for (bytes, want) in table {
            assert_eq!(read_wav(bytes).unwrap_err().to_string(), want);
        }
    }

    #[test]
    fn speech_is_made_of_other_rates_and_stereo() {
        let one_second = vec![0u8; 22050 * 2 * 2];
        let f = AudioFormat {
            rate: 22050,
            width: 2,
            channels: 2,
        };
        assert_eq!(to_speech(f, &one_second).unwrap().len(), 32000);
        let err = to_speech(
            AudioFormat {
                rate: 48000,
                width: 4,
                channels: 1,
            },
            &[0; 8],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unsupported audio: 48000 Hz, 4 bytes per sample, 1 channel; 16-bit audio of 1 or 2 channels is needed"
        );
    }

    #[test]
    fn the_end_of_an_utterance_is_the_quiet_after_speech() {
        let mut e = Endpointer::new(AudioFormat::SPEECH, EndpointConfig::default()).unwrap();
        assert_eq!(e.push(&tone(500, 0.0)), Endpoint::Waiting);
        assert_eq!(e.push(&tone(60, 8000.0)), Endpoint::Waiting);
        assert_eq!(e.push(&tone(940, 8000.0)), Endpoint::Speaking);
        assert_eq!(e.push(&tone(300, 0.0)), Endpoint::Speaking);
        assert_eq!(
            e.push(&tone(1000, 0.0)),
            Endpoint::Ended {
                speech_end_ms: 1500
            }
        );
        assert_eq!(
            e.push(&tone(1000, 8000.0)),
            Endpoint::Ended {
                speech_end_ms: 1500
            }
        );

        let mut quiet = Endpointer::new(AudioFormat::SPEECH, EndpointConfig::default()).unwrap();
        assert_eq!(quiet.push(&tone(16_000, 100.0)), Endpoint::NoSpeech);

        let mut endless = Endpointer::new(AudioFormat::SPEECH, EndpointConfig::default()).unwrap();
        assert_eq!(endless.push(&tone(31_000, 8000.0)), Endpoint::TooLong);

        let stereo = AudioFormat {
            channels: 2,
            ..AudioFormat::SPEECH
        };
        assert!(Endpointer::new(stereo, EndpointConfig::default()).is_err());
    }
}
