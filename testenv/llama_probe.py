"""Probe the resident model server (testenv/run-llama-server.sh) by hand and print its raw replies.

    llama_probe.py http://127.0.0.1:PORT [SERVER_PID]

Standard library only; loopback only (any other host is refused). Sends a plain chat request,
requests with OpenAI-style `tools` (tool_choice "auto", and one naming a function), the
`response_format` forms (OpenAI's `json_schema` and llama-cpp-python's `json_object` with a
`schema`), and the token counting requests; prints each status, latency and body, then the
server's peak RSS when its pid is given.
"""

import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_current_time",
            "description": "Get the current time in a timezone.",
            "parameters": {
                "type": "object",
                "properties": {
                    "timezone": {
                        "type": "string",
                        "description": "IANA timezone name, e.g. Europe/Berlin",
                    }
                },
                "required": ["timezone"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "memory_create_entities",
            "description": "Create entities in the knowledge graph memory.",
            "parameters": {
                "type": "object",
                "properties": {
                    "entities": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "entityType": {"type": "string"},
                                "observations": {
                                    "type": "array",
                                    "items": {"type": "string"},
                                },
                            },
                            "required": ["name", "entityType", "observations"],
                        },
                    }
                },
                "required": ["entities"],
            },
        },
    },
]

ROUTE_SCHEMA = {
    "type": "object",
    "properties": {
        "intent": {"type": "string", "enum": ["time", "remember", "chat"]},
        "argument": {"type": "string"},
    },
    "required": ["intent", "argument"],
}

SYSTEM = "You are Maven, a personal assistant. Use a function when one fits."


def chat(*user: str) -> dict:
    return {
        "model": "smollm2-135m-instruct",
        "messages": [{"role": "system", "content": SYSTEM}]
        + [{"role": "user", "content": u} for u in user],
        "temperature": 0,
        "max_tokens": 128,
    }


def probes() -> list:
    plain = chat("Say hello in one short sentence.")
    tools_time = dict(chat("What time is it in Tokyo?"), tools=TOOLS, tool_choice="auto")
    tools_memory = dict(
        chat("Remember that my sister Anna lives in Berlin."), tools=TOOLS, tool_choice="auto"
    )
    tools_chat = dict(chat("Thanks, that is all."), tools=TOOLS, tool_choice="auto")
    tools_named = dict(
        chat("What time is it in Tokyo?"),
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_current_time"}},
    )
    tools_hello = dict(chat("Say hello in one short sentence."), tools=TOOLS, tool_choice="auto")
    no_system = dict(chat("What time is it in Tokyo?"), tools=TOOLS, tool_choice="auto")
    no_system["messages"] = no_system["messages"][1:]
    # A turn after a tool's result: the assistant's call and the `tool` message with its answer.
    after_tool = dict(chat("What time is it in Tokyo?"), tools=TOOLS, tool_choice="auto")
    after_tool["messages"] += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "get_current_time",
                        "arguments": '{"timezone": "Asia/Tokyo"}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "2026-12-04T03:00:00+09:00"},
    ]
    # The same with the assistant's content "" (OpenAI sends null there).
    after_tool_empty = json.loads(json.dumps(after_tool))
    after_tool_empty["messages"][2]["content"] = ""
    tools_required = dict(chat("What time is it in Tokyo?"), tools=TOOLS, tool_choice="required")
    tools_default = dict(chat("What time is it in Tokyo?"), tools=TOOLS)
    openai_schema = dict(
        chat("What time is it in Tokyo? Answer as JSON."),
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "route", "strict": True, "schema": ROUTE_SCHEMA},
        },
    )
    json_object_schema = dict(
        chat("What time is it in Tokyo? Answer as JSON."),
        response_format={"type": "json_object", "schema": ROUTE_SCHEMA},
    )
    text = "What time is it in Tokyo?"
    return [
        ("a. plain chat", "/v1/chat/completions", plain),
        ("b1. tools, auto (time)", "/v1/chat/completions", tools_time),
        ("b2. tools, auto (memory)", "/v1/chat/completions", tools_memory),
        ("b3. tools, auto (no tool fits)", "/v1/chat/completions", tools_chat),
        ("b4. tools, a named function", "/v1/chat/completions", tools_named),
        ("b5. tools, auto (a greeting)", "/v1/chat/completions", tools_hello),
        ("b6. tools, auto, no system message", "/v1/chat/completions", no_system),
        ("b7. tools, auto, after a tool's result", "/v1/chat/completions", after_tool),
        ("b8. the same, the assistant's content \"\"", "/v1/chat/completions", after_tool_empty),
        ("b9. tools, tool_choice \"required\"", "/v1/chat/completions", tools_required),
        ("b10. tools, no tool_choice", "/v1/chat/completions", tools_default),
        ("c1. response_format json_schema (OpenAI)", "/v1/chat/completions", openai_schema),
        ("c2. response_format json_object + schema", "/v1/chat/completions", json_object_schema),
        ("d1. tokenize", "/extras/tokenize", {"input": text}),
        ("d2. tokenize count", "/extras/tokenize/count", {"input": text}),
        ("d3. detokenize", "/extras/detokenize", {"tokens": [1, 2, 3]}),
        ("e. models", "/v1/models", None),
    ]


def send(base: str, path: str, body) -> tuple:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method="GET" if data is None else "POST")
    req.add_header("Content-Type", "application/json")
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    return status, time.monotonic() - started, raw.decode("utf-8", "replace")


def print_rss(pid: str) -> None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmHWM", "VmRSS")):
                    print(line.strip())
    except OSError as e:
        print(f"no memory figures for pid {pid}: {e}")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    base = sys.argv[1].rstrip("/")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    host = urllib.parse.urlsplit(base).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        sys.exit(f"llama_probe: {host} is not the loopback")
    # Never through a proxy: loopback only.
    urllib.request.install_opener(urllib.request.build_opener(urllib.request.ProxyHandler({})))
    for name, path, body in probes():
        status, seconds, raw = send(base, path, body)
        method = "GET" if body is None else "POST"
        print(f"== {name}: {method} {path} -> {status} in {seconds:.2f} s")
        try:
            print(json.dumps(json.loads(raw), indent=1))
        except ValueError:
            print(raw)
        sys.stdout.flush()
    if len(sys.argv) > 2:
        print("== server memory")
        print_rss(sys.argv[2])


if __name__ == "__main__":
    main()
