"""Which client serves a model, and where its key comes from.

Keys come only from environment variables and are handed straight to the official
client; nothing here returns, prints or records a key value. A model entry is either
``model`` (served by the campaign's ``provider`` parameter) or ``provider:model``
(provider ``per_model``, the default profile mixing Anthropic and OpenAI models).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlsplit, urlunsplit

from probes.core.errors import UsageError

PROVIDERS = ("anthropic", "openai", "openai_compatible", "scripted")
PROVIDER_CHOICES = ("per_model",) + PROVIDERS
KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
# Client-side retries of a failed request (rate limits, 5xx); a call still failing after
# them is a harness error. Retried requests are not counted again against max_calls.
MAX_RETRIES = 2


@dataclass(frozen=True)
class ModelRef:
    provider: str
    model: str

    @property
    def slug(self) -> str:
        """File-name-safe identity used in probe ids."""
        return f"{self.provider}.{re.sub(r'[^A-Za-z0-9._-]+', '_', self.model)}"

    @property
    def label(self) -> str:
        return f"{self.provider}/{self.model}"


def parse_models(provider: str, models: list[str]) -> list[ModelRef]:
    """Resolve each entry to (provider, model); a prefix must agree with ``provider``."""
    refs = []
    for entry in models:
        head, sep, rest = entry.partition(":")
        if sep and head in PROVIDERS:
            if provider != "per_model" and head != provider:
                raise UsageError(f"model {entry!r} names provider {head!r} but provider={provider!r}; "
                                 f"drop the prefix or use provider=per_model")
            refs.append(ModelRef(head, rest))
        elif provider == "per_model":
            raise UsageError(f"provider=per_model needs 'provider:model' entries, got {entry!r} "
                             f"(providers: {', '.join(PROVIDERS)})")
        else:
            refs.append(ModelRef(provider, entry))
    if len({r.label for r in refs}) != len(refs):
        raise UsageError("models lists a model twice")
    return refs


def key_env_name(provider: str, params: Mapping[str, Any]) -> str:
    """The environment variable holding the key ('' = this provider needs none)."""
    if provider in KEY_ENV:
        return KEY_ENV[provider]
    if provider == "openai_compatible":
        return str(params.get("api_key_env", ""))
    return ""


def has_key(provider: str, params: Mapping[str, Any]) -> bool:
    """Whether a run may talk to ``provider``: its key is set (or it needs none)."""
    if provider == "scripted":
        return True
    if provider == "openai_compatible" and not params.get("base_url"):
        return False
    name = key_env_name(provider, params)
    return not name or bool(os.environ.get(name))


def public_base_url(url: str) -> str:
    """A base URL without user info, query or fragment (those may carry credentials)."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def build_model(ref: ModelRef, params: Mapping[str, Any], seed: int) -> Any:
    """The official LangChain client for ``ref`` (imported only here, only when used)."""
    try:
        return _build_model(ref, params, seed)
    except ModuleNotFoundError as exc:
        raise UsageError(f"the client for provider {ref.provider} is not installed ({exc.name}); install the "
                         f"pins from env/requirements.in (langchain-anthropic / langchain-openai)") from None


def _build_model(ref: ModelRef, params: Mapping[str, Any], seed: int) -> Any:
    from probes.studies.live.calls import MAX_OUTPUT_TOKENS_PER_CALL, register_secret_env

    timeout = float(params["timeout_s"])
    if ref.provider == "scripted":
        from probes.studies.live.scripted import ScriptedChatModel

        return ScriptedChatModel()
    if ref.provider == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(model=ref.model, api_key=os.environ[KEY_ENV["anthropic"]], timeout=timeout,
                             max_retries=MAX_RETRIES, max_tokens=MAX_OUTPUT_TOKENS_PER_CALL)
    if ref.provider in ("openai", "openai_compatible"):
        from langchain_openai import ChatOpenAI

        kwargs: dict[str, Any] = {"model": ref.model, "timeout": timeout, "max_retries": MAX_RETRIES,
                                  "max_tokens": MAX_OUTPUT_TOKENS_PER_CALL, "seed": seed}
        if ref.provider == "openai":
            kwargs["api_key"] = os.environ[KEY_ENV["openai"]]
        else:
            name = key_env_name(ref.provider, params)
            register_secret_env(name)
            # A local server without authentication still needs a non-empty placeholder.
            kwargs["api_key"] = os.environ.get(name, "") if name else "no-key"
            kwargs["base_url"] = str(params["base_url"])
        return ChatOpenAI(**kwargs)
    raise UsageError(f"unknown provider {ref.provider!r}")


def client_versions() -> dict[str, str | None]:
    """Versions of the model clients (not tracked by the core manifest)."""
    import importlib.metadata

    out: dict[str, str | None] = {}
    for name in ("langchain-anthropic", "langchain-openai", "anthropic", "openai"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out
