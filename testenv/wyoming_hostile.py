"""A hostile Wyoming service, scripted: python3 wyoming_hostile.py MODE

Listens on 127.0.0.1 (a free port), prints "WYOMING_PEER_LISTENING tcp://127.0.0.1:<port>" on
stderr, and answers every connection, once the client's first line arrived, as MODE says
(everything the client sends is read and dropped):

  huge-header     a header line of 300 000 bytes
  huge-payload    an audio-chunk announcing a 2 GiB payload, then zeros for as long as read
  endless-chunks  audio-start, then 2 KiB audio-chunks without end
  endless-events  transcript-chunk events without end
  trickle         a ping's pong every 0.3 s, never the answer
  silent          nothing, ever
  wrong-format    audio-start of 96 kHz, 4 bytes per sample, 2 channels
  format-change   audio-start of 22050 Hz mono 16-bit, then a chunk of 16000 Hz
  sentence-format-change  one sentence's audio at 22050 Hz (start, chunk, stop), then the
                  next's audio-start and chunk at 16000 Hz
  garbage         a line of bytes that is not JSON
  truncated       an audio-chunk announcing 100 bytes of payload, 10 of them, then a close
  close           a close, with no answer
  error           an error event ("model not loaded", code "no-model")
  error-flood     an error event whose text is 100 000 characters of terminal escapes

Standard library only.
"""

import json
import socket
import sys
import threading
import time


def header(kind, data=None, payload_length=0):
    h = {"type": kind, "version": "1.10.2"}
    body = b""
    if data:
        body = json.dumps(data).encode()
        h["data_length"] = len(body)
    if payload_length:
        h["payload_length"] = payload_length
    return json.dumps(h).encode() + b"\n" + body


def drain(conn, first_line):
    buf = b""
    try:
        while b"\n" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
        first_line.set()
        while conn.recv(65536):
            pass
    except OSError:
        pass
    finally:
        first_line.set()


def answer(conn, mode):
    fmt = {"rate": 22050, "width": 2, "channels": 1}
    if mode == "huge-header":
        conn.sendall(b'{"type":"info","data":{"x":"' + b"a" * 300_000 + b'"}}\n')
    elif mode == "huge-payload":
        conn.sendall(header("audio-chunk", fmt, 2 * 1024 * 1024 * 1024))
        while True:
            conn.sendall(b"\0" * 65536)
    elif mode == "endless-chunks":
        conn.sendall(header("audio-start", fmt))
        chunk = header("audio-chunk", fmt, 2048) + b"\1\0" * 1024
        while True:
            conn.sendall(chunk)
    elif mode == "endless-events":
        chunk = header("transcript-chunk", {"text": "a"})
        while True:
            conn.sendall(chunk)
    elif mode == "trickle":
        while True:
            conn.sendall(header("pong", {"text": "still here"}))
            time.sleep(0.3)
    elif mode == "silent":
        time.sleep(3600)
    elif mode == "wrong-format":
        conn.sendall(header("audio-start", {"rate": 96000, "width": 4, "channels": 2}))
        time.sleep(3600)
    elif mode == "format-change":
        conn.sendall(header("audio-start", fmt))
        conn.sendall(header("audio-chunk", {"rate": 16000, "width": 2, "channels": 1}, 4) + b"\0" * 4)
        time.sleep(3600)
    elif mode == "sentence-format-change":
        # One sentence's audio, then the next in another format.
        conn.sendall(header("audio-start", fmt))
        conn.sendall(header("audio-chunk", fmt, 4) + b"\0" * 4)
        conn.sendall(header("audio-stop"))
        other = {"rate": 16000, "width": 2, "channels": 1}
        conn.sendall(header("audio-start", other))
        conn.sendall(header("audio-chunk", other, 4) + b"\0" * 4)
        time.sleep(3600)
    elif mode == "garbage":
        conn.sendall(b"\x00\xff\xfe this is not JSON {{{\n")
        time.sleep(3600)
    elif mode == "truncated":
        conn.sendall(header("audio-chunk", fmt, 100) + b"\0" * 10)
    elif mode == "close":
        time.sleep(0.2)  # what the client sent is read first: a close, not a reset
    elif mode == "error":
        conn.sendall(header("error", {"text": "model not loaded", "code": "no-model"}))
        time.sleep(3600)
    elif mode == "error-flood":
        conn.sendall(header("error", {"text": "\x1b[2J" * 25_000}))
        time.sleep(3600)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


def serve(conn, mode):
    first_line = threading.Event()
    threading.Thread(target=drain, args=(conn, first_line), daemon=True).start()
    first_line.wait(30)
    try:
        answer(conn, mode)
    except OSError:
        pass
    finally:
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        conn.close()


def main():
    mode = sys.argv[1]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    print(f"WYOMING_PEER_LISTENING tcp://127.0.0.1:{srv.getsockname()[1]}", file=sys.stderr, flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn, mode), daemon=True).start()


if __name__ == "__main__":
    main()
