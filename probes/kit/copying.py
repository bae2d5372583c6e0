"""Byte-identical copies of a crashed run's durable state, and the digests that prove them identical.

The rd protocol (``probes.kit.rd``) asks whether the same durable state, recovered twice, makes
the same recovery decision. "The same" has to be checked, not assumed: every copy is digested and
compared with the original before any copy is recovered. What is copied is what the harness made
and the adapter keeps, nothing of the framework's own: the run's directory as a tree (a ``file``
backend's state, and whatever an adapter keeps beside its store), an SQLite store with its
``-wal`` and ``-shm`` files (a killed writer leaves committed pages in the WAL only), and a
PostgreSQL database as ``CREATE DATABASE ... TEMPLATE`` (the server copies its files; the dead
client's backends are ended first, since a template must have no other sessions).

Everything here runs in the kit's own process with no framework imported: an adapter's
``copy_store`` override copies files and databases, never framework objects.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

SKIPPED = (".markers",)  # the kit's barrier and fault markers in a run's directory: not durable state
SQLITE_SIDES = ("", "-wal", "-shm")


def copy_tree(src: Path, dst: Path) -> None:
    """The run directory ``src`` into ``dst`` (created or merged), byte for byte, symlinks as links."""
    dst.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*SKIPPED))


def tree_digest(root: Path) -> str:
    """One digest of every file under ``root`` (relative path and bytes, sorted), markers left out."""
    h = hashlib.sha256()
    if root.is_dir():
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if rel.parts[0] in SKIPPED or path.is_dir():
                continue
            h.update(str(rel).encode() + b"\0")
            h.update(path.readlink().as_posix().encode() if path.is_symlink() else path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def copy_sqlite(src: str, dst: str) -> None:
    """The SQLite file ``src`` and its WAL and shared-memory files, whichever exist, to ``dst``."""
    for side in SQLITE_SIDES:
        Path(dst + side).unlink(missing_ok=True)
        if Path(src + side).exists():
            shutil.copyfile(src + side, dst + side)


def sqlite_digest(path: str) -> str:
    """The bytes of the SQLite file and of its WAL and shared-memory files (absent ones named so)."""
    h = hashlib.sha256()
    for side in SQLITE_SIDES:
        f = Path(path + side)
        h.update(side.encode() + (b"=" + f.read_bytes() if f.exists() else b" absent") + b"\0")
    return h.hexdigest()


def _database(dsn: str) -> tuple[str, str]:
    """(the database ``dsn`` names, a DSN of the same server's ``postgres`` database)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    return str(conninfo_to_dict(dsn)["dbname"]), make_conninfo(dsn, dbname="postgres")


def copy_postgres(src: str, dst: str) -> None:
    """The database ``src`` as a template of ``dst`` (dropped first: the store factory made it empty)."""
    import psycopg

    src_db, admin = _database(src)
    dst_db, _ = _database(dst)
    with psycopg.connect(admin, autocommit=True) as conn:
        # the killed client's backend may still be exiting; a template may have no other session
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                     "AND pid <> pg_backend_pid()", (src_db,))
        conn.execute(f'DROP DATABASE IF EXISTS "{dst_db}"')
        conn.execute(f'CREATE DATABASE "{dst_db}" TEMPLATE "{src_db}"')


def postgres_digest(dsn: str) -> str:
    """The database's contents: every user table's rows (as text, sorted) and every sequence's state.

    A TEMPLATE copy is a file copy made by the server, which keeps no byte view of a database a
    client can read; equal contents of every table and sequence is what "identical" can mean here."""
    import psycopg

    h = hashlib.sha256()
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = conn.execute("SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = "
                              "'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') "
                              "ORDER BY 1, 2").fetchall()
        for schema, table in tables:
            (rows,) = conn.execute(f'SELECT md5(coalesce(string_agg(t::text, E\'\\n\' ORDER BY t::text), \'\')) '
                                   f'FROM "{schema}"."{table}" AS t').fetchone()
            h.update(f"{schema}.{table}={rows}\n".encode())
        seqs = conn.execute("SELECT sequence_schema, sequence_name FROM information_schema.sequences "
                            "ORDER BY 1, 2").fetchall()
        for schema, seq in seqs:
            state = conn.execute(f'SELECT last_value, is_called FROM "{schema}"."{seq}"').fetchone()
            h.update(f"{schema}.{seq}={state}\n".encode())
    return h.hexdigest()


def copy_state(workdir: Path, backend: str, store: str | None, to_workdir: Path, to_store: str | None) -> None:
    """A run's durable state (its directory, and its SQLite or PostgreSQL store) to another run's place."""
    copy_tree(workdir, to_workdir)
    if backend == "sqlite" and store and to_store:
        copy_sqlite(store, to_store)
    elif backend == "postgres" and store and to_store:
        copy_postgres(store, to_store)


def state_digest(workdir: Path, backend: str, store: str | None) -> str:
    """One digest of a run's durable state: its directory's tree and its store."""
    parts = [tree_digest(workdir)]
    if backend == "sqlite" and store:
        parts.append(sqlite_digest(store))
    elif backend == "postgres" and store:
        parts.append(postgres_digest(store))
    return hashlib.sha256("/".join(parts).encode()).hexdigest()
