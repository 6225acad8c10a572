//! `testkit-authserver`: the test kit's loopback authorization server (which is also the MCP
//! server it protects), well-behaved, for end-to-end tests of the daemon and the page. Prints
//! its base URL (`http://127.0.0.1:PORT`) on stdout and serves until killed.

#![allow(
    clippy::disallowed_macros,
    reason = "a test server: its output is for the tests that run it"
)]

use std::io::Write as _;

fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("testkit-authserver: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let server = match testkit::authserver::AuthServer::start(
            testkit::authserver::Hostile::None,
        )
        .await
        {
            Ok(s) => s,
            Err(e) => {
                eprintln!("testkit-authserver: cannot listen: {e}");
                return std::process::ExitCode::FAILURE;
            }
        };
        println!("{}", server.base);
        let _ = std::io::stdout().flush();
        std::future::pending::<()>().await;
        std::process::ExitCode::SUCCESS
    })
}
