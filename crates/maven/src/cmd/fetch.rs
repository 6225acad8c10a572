//! `maven fetch`.
pub(crate) async fn run(
    _url: &str,
    _door: webfetch::DoorConfig,
    _json: bool,
) -> std::process::ExitCode {
    eprintln!("maven fetch: not available in this build");
    std::process::ExitCode::from(1)
}
