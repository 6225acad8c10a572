//! The voice listener's place in the daemon: [`VoiceService`] owns the listener in force
//! (`voice.listen`, served by `crate::voice` through `gate::serve`) and the token that stops
//! it alone, and is its only handle. A listen that cannot be had is the owner's to fix and
//! logged; the rest of the daemon runs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use config::Config;

use super::shared::lock;

/// `voice.listen` could not be bound.
#[derive(Debug, thiserror::Error)]
#[error("voice.listen {addr}: cannot listen: {source}")]
struct VoiceBindError {
    addr: std::net::SocketAddr,
    source: std::io::Error,
}

/// The voice listener of the daemon (`None` inside: no `voice.listen`).
pub(crate) struct VoiceService {
    running: Mutex<Option<CancellationToken>>,
    turns: Arc<turns::Turns>,
    cancel: CancellationToken,
    tracker: TaskTracker,
}

impl VoiceService {
    /// Serves the Wyoming protocol on `voice.listen`, if configured, each transcript a turn of
    /// `turns`.
    pub(crate) async fn start(
        config: &Config,
        turns: &Arc<turns::Turns>,
        cancel: &CancellationToken,
        tracker: &TaskTracker,
    ) -> VoiceService {
        let service = VoiceService {
            running: Mutex::new(None),
            turns: turns.clone(),
            cancel: cancel.clone(),
            tracker: tracker.clone(),
        };
        match listener(config).await {
            Ok(Some((l, gate))) => service.serve(l, gate),
            Ok(None) => {}
            Err(e) => tracing::error!(error = %e, "voice: not serving"),
        }
        service
    }

    fn serve(&self, l: tokio::net::TcpListener, gate: crate::voice::Gate) {
        let stop = self.cancel.child_token();
        self.tracker.spawn(crate::voice::serve(
            l,
            gate,
            self.turns.clone(),
            stop.clone(),
        ));
        *lock(&self.running) = Some(stop);
    }

    /// Stops the voice listener and starts it on the new `voice` block; its address may take a
    /// moment to be free again, so a bind that finds it in use is tried again, for 2 s at most.
    pub(crate) async fn restart(&self, config: &Config) {
        if let Some(t) = lock(&self.running).take() {
            t.cancel();
        }
        for _ in 0..20 {
            match listener(config).await {
                Ok(Some((l, gate))) => return self.serve(l, gate),
                Ok(None) => return,
                Err(e) if e.source.kind() == std::io::ErrorKind::AddrInUse => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => {
                    tracing::error!(error = %e, "voice: not serving");
                    return;
                }
            }
        }
        tracing::error!("voice: not serving: voice.listen stayed in use for 2 s");
    }
}

/// The Wyoming listener of `voice.listen`, bound, with who may connect; `None` without one.
async fn listener(
    config: &Config,
) -> Result<Option<(tokio::net::TcpListener, crate::voice::Gate)>, VoiceBindError> {
    let Some(addr) = config.voice.listen else {
        return Ok(None);
    };
    let l = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| VoiceBindError { addr, source })?;
    tracing::info!(listen = %addr, "voice: serving the Wyoming protocol");
    Ok(Some((
        l,
        crate::voice::Gate::for_listen(addr, &config.voice.peers),
    )))
}
