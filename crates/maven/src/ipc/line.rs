//! Reading one bounded line of the wire (`wire::protocol`) from a socket: the async half of the
//! framing, the server's and the client's. A leaf.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// Reads one line of at most `max` bytes (newline excluded). `Ok(None)` at end of stream.
///
/// The bound is enforced by the reader (`take`), so an endless line is never assembled.
/// Not cancel safe: a dropped call loses a partly read line; callers drop the connection then.
pub(crate) async fn read_line<R: AsyncRead + Unpin>(
    r: &mut BufReader<R>,
    max: u64,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<()>> {
    buf.clear();
    let n = r.take(max + 1).read_until(b'\n', buf).await?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    } else if buf.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("line longer than {max} bytes"),
        ));
    }
    Ok(Some(()))
}
