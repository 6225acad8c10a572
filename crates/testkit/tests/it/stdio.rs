//! The stdio transport against the well-behaved and every hostile behaviour of `testkit-mcp`.

use std::sync::Arc;
use std::time::Duration;

use mcp::{Client, CloseReason, Error, Incomplete, McpTimeouts, Violation};
use serde_json::{json, Map};

use crate::support::{
    args, bounded, options, process_exists, short, stdio, stdio_in, Record, ERAS,
};

fn quick_call() -> McpTimeouts {
    McpTimeouts {
        call: Duration::from_millis(500),
        ..short()
    }
}

async fn connect(flags: &[&str], timeouts: McpTimeouts) -> Client {
    Client::connect(&stdio(flags, timeouts), options())
        .await
        .expect("the test server connects")
}

/// The test server speaking `era`, the client pinned to it.
async fn connect_in(era: mcp::Era, flags: &[&str], timeouts: McpTimeouts) -> Client {
    let c = Client::connect(&stdio_in(era, flags, timeouts), options())
        .await
        .expect("the test server connects");
    assert_eq!(c.era(), era);
    c
}

#[tokio::test]
async fn well_behaved_server_end_to_end_and_no_zombie() {
    bounded(async {
        let rec = Record::new();
        let c = connect(&[&rec.arg()], short()).await;
        let info = c.server_info();
        assert_eq!(info.protocol_version, mcp::PROTOCOL_VERSION);
        assert_eq!(
            (info.name.as_str(), info.version.as_str()),
            ("testkit-mcp", "1.0.0")
        );
        assert_eq!(c.transport_name(), "stdio");

        let list = c.list_tools().await.unwrap();
        let names: Vec<_> = list.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "delete_item"]);
        assert_eq!(list.pages, 1);
        assert!(list.tools[0].read_only_claim() && !list.tools[0].destructive());
        assert!(list.tools[1].destructive());
        // Kept raw: the whole object as received.
        assert_eq!(
            list.tools[0].raw["inputSchema"]["required"],
            json!(["text"])
        );

        let out = c.call_tool("echo", args("hello")).await.unwrap();
        assert_eq!(out.text, "hello");
        assert!(!out.is_error && !out.truncated);
        let unknown = c.call_tool("nope", Map::new()).await.unwrap_err();
        assert_eq!(unknown.rpc_code(), Some(-32602));

        assert_eq!(c.list_resources().await.unwrap().len(), 1);
        assert_eq!(c.read_resource("mem://note").await.unwrap(), "a note");
        c.ping().await.unwrap();
        assert_eq!(c.stats().violations, 0);
        assert!(c.stderr_tail().unwrap().contains("testkit-mcp: ready"));

        let pid = c.pid().unwrap();
        assert!(process_exists(pid));
        c.close().await;
        assert!(!process_exists(pid), "the server was not reaped");
        assert_eq!(c.closed(), Some(CloseReason::ClosedByClient));
        assert!(c.ping().await.unwrap_err().is_closed());
        let lines = rec.lines();
        // `auto`: the modern probe first; this legacy server answers it -32601.
        assert_eq!(
            lines[..3],
            ["server/discover", "initialize", "notifications/initialized"]
        );
        assert_eq!(c.era(), mcp::Era::Legacy);
        assert!(
            c.server_info()
                .chosen
                .starts_with("fell back to initialize"),
            "{}",
            c.server_info().chosen
        );
    })
    .await;
}

#[tokio::test]
async fn sixty_four_calls_in_flight() {
    for era in ERAS {
        sixty_four_calls_in_flight_in(era).await;
    }
}

async fn sixty_four_calls_in_flight_in(era: mcp::Era) {
    bounded(async {
        let c = Arc::new(connect_in(era, &[], short()).await);
        let mut set = tokio::task::JoinSet::new();
        for i in 0..64 {
            let c = c.clone();
            set.spawn(async move { (i, c.call_tool("echo", args(&format!("m{i}"))).await) });
        }
        while let Some(r) = set.join_next().await {
            let (i, out) = r.unwrap();
            assert_eq!(out.unwrap().text, format!("m{i}"));
        }
        assert_eq!(c.stats().violations, 0);
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_stubborn_server_is_killed_and_reaped() {
    bounded(async {
        let c = connect(&["--ignore-sigterm"], short()).await;
        let pid = c.pid().unwrap();
        c.close().await;
        assert!(!process_exists(pid), "the stubborn server survived close");
    })
    .await;
}

#[tokio::test]
async fn exit_on_start() {
    bounded(async {
        let e = Client::connect(&stdio(&["--exit-on-start"], short()), options())
            .await
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Closed(CloseReason::ServerExited { code: Some(0), .. })
            ),
            "{e:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let mut cfg = stdio(&[], short());
    if let mcp::Transport::Stdio { command, .. } = &mut cfg.transport {
        *command = "/nonexistent/mcp-server".to_owned();
    }
    let e = Client::connect(&cfg, options()).await.unwrap_err();
    assert!(matches!(e, Error::Spawn { .. }), "{e:?}");
}

#[tokio::test]
async fn mute_on_initialize_times_out() {
    bounded(async {
        let t = McpTimeouts {
            init: Duration::from_millis(300),
            ..short()
        };
        let e = Client::connect(&stdio(&["--mute-on-initialize"], t), options())
            .await
            .unwrap_err();
        assert!(
            matches!(&e, Error::Timeout { method, .. } if method == "initialize"),
            "{e:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn mute_after_initialize_times_out_and_drops_the_connection() {
    // Modern: mute after server/discover.
    for era in ERAS {
        bounded(async {
            let t = McpTimeouts {
                list: Duration::from_millis(300),
                ..short()
            };
            let c = connect_in(era, &["--mute-after-initialize"], t).await;
            let e = c.list_tools().await.unwrap_err();
            assert!(
                matches!(&e, Error::Timeout { method, .. } if method == "tools/list"),
                "{era:?}: {e:?}"
            );
            assert_eq!(
                c.closed(),
                Some(CloseReason::RequestTimedOut {
                    method: "tools/list".to_owned()
                })
            );
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn mute_mid_call_cancels_and_drops_the_connection() {
    for era in ERAS {
        bounded(async {
            let rec = Record::new();
            let c = connect_in(era, &["--mute-mid-call", &rec.arg()], quick_call()).await;
            let pid = c.pid().unwrap();
            let e = c.call_tool("echo", args("x")).await.unwrap_err();
            assert!(e.is_timeout(), "{era:?}: {e:?}");
            // Over stdio both eras cancel with the notification.
            let lines = rec.wait_for(|l| l == "notifications/cancelled").await;
            assert!(
                lines.iter().any(|l| l == "notifications/cancelled"),
                "{era:?}: {lines:?}"
            );
            assert!(c.ping().await.unwrap_err().is_closed());
            c.close().await;
            assert!(!process_exists(pid));
        })
        .await;
    }
}

#[tokio::test]
async fn a_giant_line_is_never_assembled() {
    for era in ERAS {
        a_giant_line_is_never_assembled_in(era).await;
    }
}

async fn a_giant_line_is_never_assembled_in(era: mcp::Era) {
    bounded(async {
        let cap = 1024 * 1024;
        let mut opts = options();
        opts.limits.frame_cap = cap;
        let cfg = stdio_in(era, &["--giant-line=50000000"], short());
        let c = Client::connect(&cfg, opts).await.unwrap();
        assert_eq!(c.era(), era);
        let e = c.call_tool("echo", args("x")).await.unwrap_err();
        assert_eq!(
            e.close_reason(),
            Some(&CloseReason::FrameTooLarge { cap }),
            "{e:?}"
        );
        assert!(e.is_protocol_violation());
        let s = c.stats();
        assert!(
            s.peak_line_bytes <= cap + 1,
            "held {} bytes",
            s.peak_line_bytes
        );
        assert!(s.peak_line_bytes > cap, "the reader stopped early");
        assert_eq!(s.violations, 1);
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn inexact_ids_are_violations_and_the_call_times_out() {
    for era in ERAS {
        for flag in ["--wrong-id", "--string-id"] {
            bounded(async {
                let c = connect_in(era, &[flag], quick_call()).await;
                let e = c.call_tool("echo", args("x")).await.unwrap_err();
                assert!(e.is_timeout(), "{era:?} {flag}: {e:?}");
                assert_eq!(c.stats().violations, 1, "{era:?} {flag}");
                c.close().await;
            })
            .await;
        }
    }
}

#[tokio::test]
async fn result_and_error_or_neither_fail_the_call() {
    for era in ERAS {
        for (flag, want) in [
            ("--result-and-error", Violation::ResultAndError),
            ("--neither", Violation::NeitherResultNorError),
        ] {
            bounded(async {
                let c = connect_in(era, &[flag], short()).await;
                let e = c.call_tool("echo", args("x")).await.unwrap_err();
                assert!(
                    matches!(e, Error::Violation(v) if v == want),
                    "{era:?} {flag}: {e:?}"
                );
                assert_eq!(c.stats().violations, 1);
                c.close().await;
            })
            .await;
        }
    }
}

#[tokio::test]
async fn server_requests_mid_call_are_refused_and_the_call_completes() {
    bounded(async {
        let c = connect(&["--server-requests"], short()).await;
        let out = c.call_tool("echo", args("x")).await.unwrap();
        assert_eq!(
            out.text,
            "sampling/createMessage:-32601 roots/list:-32601 elicitation/create:no-error"
        );
        assert_eq!(c.stats().server_requests, 3);
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_ping_flood_is_rate_limited_and_the_call_completes() {
    bounded(async {
        let rec = Record::new();
        let c = connect(&["--ping-flood=1000", &rec.arg()], short()).await;
        let out = c.call_tool("echo", args("still here")).await.unwrap();
        assert_eq!(out.text, "still here");
        let s = c.stats();
        assert_eq!(s.server_requests, 1000);
        assert!(s.rate_limited > 0, "{s:?}");
        let answered = rec
            .lines()
            .iter()
            .filter(|l| l.starts_with("answer ping-"))
            .count();
        assert!(answered <= 1000 - usize::try_from(s.rate_limited).unwrap());
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn stdout_garbage_is_counted_then_disconnects() {
    for era in ERAS {
        bounded(async {
            let c = connect_in(era, &["--stdout-garbage=5"], short()).await;
            assert_eq!(c.call_tool("echo", args("ok")).await.unwrap().text, "ok");
            assert_eq!(c.stats().garbage_lines, 5);
            c.close().await;

            let c = connect_in(era, &["--stdout-garbage=500"], short()).await;
            let e = c.call_tool("echo", args("x")).await.unwrap_err();
            assert!(
                matches!(
                    e.close_reason(),
                    Some(CloseReason::TooManyGarbageLines { lines: 101 })
                ),
                "{era:?}: {e:?}"
            );
            c.close().await;
        })
        .await;
    }
}

#[tokio::test]
async fn crash_mid_call_reports_the_exit() {
    for era in ERAS {
        bounded(async {
            let c = connect_in(era, &["--crash-mid-call"], short()).await;
            let pid = c.pid().unwrap();
            let e = c.call_tool("echo", args("x")).await.unwrap_err();
            assert_eq!(
                e.close_reason(),
                Some(&CloseReason::ServerExited {
                    code: Some(3),
                    signal: None
                }),
                "{era:?}: {e:?}"
            );
            c.close().await;
            assert!(!process_exists(pid));
        })
        .await;
    }
}

#[tokio::test]
async fn listings_must_complete() {
    bounded(async {
        let c = connect(&["--repeated-cursor"], short()).await;
        let e = c.list_tools().await.unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Incomplete {
                    reason: Incomplete::RepeatedCursor,
                    ..
                }
            ),
            "{e:?}"
        );
        c.close().await;

        let c = connect(&["--pages=100"], short()).await;
        let e = c.list_tools().await.unwrap_err();
        assert!(
            matches!(
                &e,
                Error::Incomplete {
                    reason: Incomplete::PageCap { cap: 64 },
                    ..
                }
            ),
            "{e:?}"
        );
        c.close().await;

        let c = connect(&["--endless-pages"], short()).await;
        assert!(c.list_tools().await.unwrap_err().is_incomplete());
        c.close().await;

        let c = connect(&["--pages=3"], short()).await;
        let l = c.list_tools().await.unwrap();
        assert_eq!((l.pages, l.tools.len()), (3, 3));
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn many_tools_and_huge_descriptions() {
    bounded(async {
        let c = connect(&["--tools=3000"], short()).await;
        let l = c.list_tools().await.unwrap();
        assert_eq!(l.tools.len(), 3000);
        let v = allowlist::verdicts(&l.tools, &[], allowlist::DEFAULT_MAX_TOOLS);
        assert!(v
            .iter()
            .all(|v| v.reason().is_some_and(|r| r.contains("max_tools"))));
        c.close().await;

        // 2 tools × 1 MiB: fits the 4 MiB frame; the description is capped downstream.
        let c = connect(&["--description-bytes=1048576"], short()).await;
        let l = c.list_tools().await.unwrap();
        let d = l.tools[0].description().unwrap();
        assert_eq!(mcp::tools::cap_chars(d, 300).len(), 300);
        c.close().await;

        // 5 × 1 MiB in one page: over the frame cap, the connection is dropped.
        let c = connect(&["--tools=5", "--description-bytes=1048576"], short()).await;
        let e = c.list_tools().await.unwrap_err();
        assert!(
            matches!(e.close_reason(), Some(CloseReason::FrameTooLarge { .. })),
            "{e:?}"
        );
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn list_changed_is_signalled() {
    bounded(async {
        let c = connect(&["--list-changed"], short()).await;
        let mut rx = c.list_changed();
        // The notification follows notifications/initialized; wait for it (bounded).
        tokio::time::timeout(Duration::from_secs(10), rx.wait_for(|n| *n >= 1))
            .await
            .unwrap()
            .unwrap();
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn protocol_versions() {
    for (version, ok) in [
        ("2025-11-25", true),
        ("2025-06-18", true),
        ("2025-03-26", true),
        ("2024-11-05", false),
        ("1999-01-01", false),
    ] {
        bounded(async {
            let flag = format!("--protocol-version={version}");
            let r = Client::connect(&stdio(&[&flag], short()), options()).await;
            match r {
                Ok(c) => {
                    assert!(ok, "{version} accepted");
                    assert_eq!(c.server_info().protocol_version, version);
                    c.close().await;
                }
                Err(Error::UnsupportedProtocol { offered }) => {
                    assert!(!ok, "{version} refused");
                    assert_eq!(offered, version);
                }
                Err(e) => panic!("{version}: {e:?}"),
            }
        })
        .await;
    }
}

#[tokio::test]
async fn a_dropped_call_leaves_nothing_pending() {
    bounded(async {
        let c = connect(&["--mute-mid-call"], short()).await;
        // The caller gives up by dropping the future (not the request's deadline).
        let r =
            tokio::time::timeout(Duration::from_millis(200), c.call_tool("echo", args("x"))).await;
        assert!(r.is_err());
        // The connection is still usable: only a request's own deadline drops it.
        c.ping().await.unwrap();
        assert!(c.closed().is_none());
        c.close().await;
    })
    .await;
}

#[tokio::test]
async fn frames_larger_than_the_pipe_go_out_whole_and_in_order() {
    bounded(async {
        // 300 KiB per frame: far over a pipe's buffer, so writes are partial and queued.
        let mut opts = options();
        opts.limits.result_text_cap = 1024 * 1024;
        let c = Arc::new(Client::connect(&stdio(&[], short()), opts).await.unwrap());
        let mut set = tokio::task::JoinSet::new();
        for i in 0..16 {
            let c = c.clone();
            set.spawn(async move {
                let text = format!("{i}:{}", "y".repeat(300 * 1024));
                let out = c.call_tool("echo", args(&text)).await;
                (text, out)
            });
        }
        while let Some(r) = set.join_next().await {
            let (text, out) = r.unwrap();
            let out = out.unwrap();
            // Not assert_eq: a failure would print megabytes.
            assert!(out.text == text && !out.truncated, "a frame was mangled");
        }
        assert_eq!(c.stats().violations, 0);
        assert_eq!(c.stats().garbage_lines, 0);
        c.close().await;
    })
    .await;
}
