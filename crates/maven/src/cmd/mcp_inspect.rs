//! `maven mcp inspect`.
pub(crate) async fn run(
    _server: mcp::ServerConfig,
    _allow_tools: &[String],
    _max_tools: usize,
    _json: bool,
) -> std::process::ExitCode {
    eprintln!("maven mcp inspect: not available in this build");
    std::process::ExitCode::from(1)
}
