"""The openai_compatible provider end to end: the official ChatOpenAI client over real HTTP
to a local OpenAI-compatible server (loopback only), which answers with the scripted model.

This exercises what the in-process tests cannot: request encoding of forced tool choice,
tool-call parsing of a real client, usage accounting, and that the key travels in the
Authorization header (read from the environment variable the campaign names) but never
into a receipt.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from probes.core.campaign import run_campaign
from probes.core.checker import Label
from probes.studies.live import campaign as live
from probes.paper import live as live_paper

SECRET = "sk-local-FAKESECRET-9f8e7d6c5b4a"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    from langchain_core.messages import convert_to_messages
    from langchain_openai.chat_models.base import _convert_message_to_dict

    from probes.studies.live.scripted import ScriptedChatModel

    messages = convert_to_messages(body["messages"])
    choice = body.get("tool_choice")
    forced = choice["function"]["name"] if isinstance(choice, dict) else None
    result = ScriptedChatModel()._generate(messages, tools=body.get("tools"), tool_choice=forced)
    message = result.generations[0].message
    usage = message.usage_metadata or {}
    return {"id": "chatcmpl-local", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": _convert_message_to_dict(message),
                         "finish_reason": "tool_calls" if message.tool_calls else "stop"}],
            "usage": {"prompt_tokens": usage.get("input_tokens", 0),
                      "completion_tokens": usage.get("output_tokens", 0),
                      "total_tokens": usage.get("total_tokens", 0)}}


class _Handler(BaseHTTPRequestHandler):
    seen_auth: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 -- http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.seen_auth.append(self.headers.get("Authorization", ""))
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        data = json.dumps(_reply(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def local_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[Any]]]:
    """A loopback OpenAI-compatible server; any non-loopback connection is refused and recorded."""
    outside: list[Any] = []
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(sock: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and address[0] not in LOOPBACK:
            outside.append(address)
            raise OSError("only loopback in this test")
        return real_connect(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in LOOPBACK:
            outside.append(host)
            raise OSError("only loopback in this test")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RC_NO_PROGRESS", "1")
    _Handler.seen_auth = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", outside
    finally:
        server.shutdown()
        server.server_close()


def test_openai_compatible_endpoint_runs_the_protocols_through_the_real_client(
        tmp_path: Path, local_server: tuple[str, list[Any]], monkeypatch: pytest.MonkeyPatch,
        capfd: pytest.CaptureFixture) -> None:
    base_url, outside = local_server
    monkeypatch.setenv("RC_TEST_LOCAL_KEY", SECRET)
    params = live.CAMPAIGN.resolve({"provider": "openai_compatible", "models": ["local-scripted"], "trials": 1,
                                    "base_url": base_url, "api_key_env": "RC_TEST_LOCAL_KEY"}, quick=True)
    run = run_campaign(live.CAMPAIGN, params, receipts_root=tmp_path)
    assert outside == []
    assert run.harness_errors == []
    assert _Handler.seen_auth and set(_Handler.seen_auth) == {f"Bearer {SECRET}"}
    labels = {(r.probe.split(".")[0], v.property.value): v.label for r in run.receipts for v in r.verdicts}
    assert labels[("fork", "FD")] is Label.UNDOC
    assert labels[("approval", "CO")] is Label.PASS and labels[("session", "PC")] is Label.PASS
    fork = next(r for r in run.receipts if r.probe.startswith("fork."))
    assert fork.observations["live"] is True and fork.observations["base_url"] == base_url
    assert fork.metrics["calls"] == 4 and fork.metrics["input_tokens"] > 0  # usage came back over HTTP
    heads = live_paper.headlines(run.receipts)
    assert heads["live.claude_fork"] == "not run here: needs API keys"  # not an Anthropic model
    assert heads["live.harness_errors"].value == {"runs": 3, "harness_errors": 0}
    captured = capfd.readouterr()
    written = "\n".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    for text in (written, captured.out, captured.err):
        assert SECRET not in text and "FAKESECRET" not in text
