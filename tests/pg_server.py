"""A real PostgreSQL server for the tests, started by the suite itself.

`initdb` makes a cluster in a temporary folder owned by the current user; `pg_ctl` starts
it on a free loopback port with its unix socket in the same folder, and stops it at the
end. PostgreSQL refuses to run as root: as root (a CI container) the server runs as the
`postgres` user that Debian's package creates. Debian's server binaries live under
/usr/lib/postgresql/<version>/bin (`make test` installs them); SERVEBOOK_PG_BIN names
another folder. Tests get fresh databases copied
from a migrated and seeded template with CREATE DATABASE ... TEMPLATE, which takes
milliseconds.
"""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

import psycopg
from psycopg import sql

START_TIMEOUT_S = 60
SERVER_USER_WHEN_ROOT = "postgres"


class PostgresUnavailable(RuntimeError):
    pass


def server_bin_dir() -> Path:
    """The folder holding initdb and pg_ctl: SERVEBOOK_PG_BIN, else Debian's newest."""
    configured = os.environ.get("SERVEBOOK_PG_BIN")
    if configured:
        return Path(configured)
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parent.parent.name),
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise PostgresUnavailable(
        "PostgreSQL server binaries not found: `make test` installs Debian's postgresql, "
        "or set SERVEBOOK_PG_BIN to the folder holding initdb and pg_ctl "
        "(pytest --postgresql=off runs the database tests on SQLite only)"
    )


def as_server_user(command: list) -> list:
    """The command as the user the server may run as: ourselves, or `postgres` for root."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", SERVER_USER_WHEN_ROOT, "--", *command]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class PostgresServer:
    """One throwaway cluster; `url(name)` is the SQLAlchemy URL of a database in it."""

    root: Path
    port: int
    bin_dir: Path
    user: str = "servebook"
    _names: count = field(default_factory=lambda: count(1))

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    @classmethod
    def start(cls) -> "PostgresServer":
        bin_dir = server_bin_dir()
        server = cls(Path(tempfile.mkdtemp(prefix="servebook-pg-")), free_port(), bin_dir)
        server.socket_dir.mkdir()
        if os.geteuid() == 0:
            for path in (server.root, server.socket_dir):
                shutil.chown(path, SERVER_USER_WHEN_ROOT)
        run = dict(check=True, capture_output=True, text=True)
        try:
            subprocess.run(
                as_server_user(
                    [
                        bin_dir / "initdb",
                        "-D",
                        server.data_dir,
                        "-U",
                        server.user,
                        "--auth=trust",
                        "--encoding=UTF8",
                        "--locale=C.UTF-8",
                        "--no-sync",
                    ]
                ),
                **run,
            )
            # fsync off: a test cluster never outlives a crash, and it is several times faster.
            options = (
                f"-p {server.port} -k {server.socket_dir} -c listen_addresses=127.0.0.1"
                " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
            subprocess.run(
                as_server_user(
                    [
                        bin_dir / "pg_ctl",
                        "-D",
                        server.data_dir,
                        "-o",
                        options,
                        "-w",
                        "-t",
                        str(START_TIMEOUT_S),
                        "-l",
                        server.root / "server.log",
                        "start",
                    ]
                ),
                **run,
            )
        except subprocess.CalledProcessError as error:
            log = server.root / "server.log"
            detail = log.read_text() if log.exists() else ""
            shutil.rmtree(server.root, ignore_errors=True)
            raise PostgresUnavailable(f"{error.cmd[0]} failed: {error.stderr}{detail}") from error
        return server

    def stop(self) -> None:
        subprocess.run(
            as_server_user(
                [self.bin_dir / "pg_ctl", "-D", self.data_dir, "-m", "immediate", "stop"]
            ),
            capture_output=True,
        )
        shutil.rmtree(self.root, ignore_errors=True)

    def admin(self) -> psycopg.Connection:
        # CREATE and DROP DATABASE cannot run inside a transaction.
        return psycopg.connect(
            host="127.0.0.1", port=self.port, user=self.user, dbname="postgres", autocommit=True
        )

    def create_database(self, template: str | None = None, name: str | None = None) -> str:
        name = name or f"test_{os.getpid()}_{next(self._names)}"
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template:
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        with self.admin() as connection:
            connection.execute(statement)
        return name

    def drop_database(self, name: str) -> None:
        with self.admin() as connection:
            connection.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
