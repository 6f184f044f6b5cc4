"""Starts `plexus serve` for the driver tests: one server with users
(authentication on, as by default) and one with `--auth none`, each on a
fresh database and a port the system picks, on 127.0.0.1 only."""

import os
import re
import subprocess
import tempfile
import time

import pytest

BIN = os.environ.get("PLEXUS_BIN", "plexus")


class Server:
    def __init__(self, auth: str, tls: bool = False):
        self.dir = tempfile.TemporaryDirectory(prefix="plexus-bolt-")
        self.db = os.path.join(self.dir.name, "db")
        self.plexus("init")
        extra = []
        if tls:
            cert, key = (os.path.join(self.dir.name, f) for f in ("cert.pem", "key.pem"))
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                 "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                 "-keyout", key, "-out", cert],
                check=True, capture_output=True,
            )
            self.cert = cert
            extra = ["--tls-cert", cert, "--tls-key", key]
        if auth == "users":
            self.plexus("user", "add", "admin", "--role", "admin", stdin="admin-pw\n")
            self.plexus("user", "add", "writer", "--role", "read-write", stdin="writer-pw\n")
            self.plexus("user", "add", "reader", "--role", "read-only", stdin="reader-pw\n")
            self.plexus("user", "add", "sales", "--database", "sales", stdin="sales-pw\n")
            self.plexus("user", "add", "auditor", "--role", "read-only", "--database", "sales",
                        "--database", "audit=read-write", stdin="auditor-pw\n")
        self.log = open(os.path.join(self.dir.name, "log"), "w+")
        self.proc = subprocess.Popen(
            [BIN, "--db", self.db, "serve", "--listen", "127.0.0.1:0", "--auth", auth, *extra],
            stdout=self.log,
            stderr=self.log,
        )
        self.address = self._wait_for_address()

    def plexus(self, *args, stdin=None):
        subprocess.run([BIN, "--db", self.db, *args], input=stdin, text=True, check=True, capture_output=True)

    def _wait_for_address(self):
        deadline = time.time() + 30
        while time.time() < deadline:
            self.log.seek(0)
            m = re.search(r"serving bolt(?:\+s)?://([0-9.]+:[0-9]+)", self.log.read())
            if m:
                return m.group(1)
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.log.seek(0)
        raise RuntimeError("plexus serve did not start: " + self.log.read())

    def stop(self):
        self.proc.terminate()  # SIGTERM; the server is also tested with Ctrl-C
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()
        self.dir.cleanup()


@pytest.fixture(scope="session")
def open_server():
    s = Server("none")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def tls_server():
    s = Server("users", tls=True)
    yield s
    s.stop()


@pytest.fixture(scope="session")
def auth_server():
    s = Server("users")
    yield s
    s.stop()
