"""A PostgreSQL server of a fault test's own (`.ci/postgres start`), so that other tests' server is not disturbed:
stopped and restarted on demand, its connections ended, stopped and deleted by close(). Shared by
Tests/cli-faults.py (the command line) and Receiver/Tests/e2e/fault.py (the receiver)."""
from __future__ import annotations

import subprocess
from pathlib import Path


class PrivatePostgres:
    """A private server: .ci/postgres start; close() stops it and deletes its directory."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        out = subprocess.run([str(repo / ".ci/postgres"), "start"], check=True, capture_output=True, text=True)
        env = {}
        for line in out.stdout.splitlines():
            if line.startswith("export "):
                name, _, value = line[len("export "):].partition("=")
                env[name] = value.strip("'")
        self.dir = Path(env["POSTBACK_VERIFY_TEST_POSTGRES_DIR"])
        self.port = (self.dir / "port").read_text().strip()
        self.bindir = (self.dir / "bindir").read_text().strip()
        self.user = (self.dir / "data").owner()

    def conninfo(self, database: str = "postgres") -> str:
        return f"host={self.dir} port={self.port} user=postgres dbname={database}"

    def psql(self, sql: str, database: str = "postgres") -> str:
        done = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", self.conninfo(database),
                               "-c", sql], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"psql {sql!r}: {done.stderr.strip()}")
        return done.stdout.strip()

    def new_database(self, name: str) -> str:
        self.psql(f"DROP DATABASE IF EXISTS {name}")
        self.psql(f"CREATE DATABASE {name}")
        return self.conninfo(name)

    def terminate_ours(self) -> int:
        """Ends every connection of postback-verify and postback-receiver (their fallback_application_name,
        postback-verify); how many."""
        return int(self.psql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                             "WHERE application_name = 'postback-verify' AND pid <> pg_backend_pid()") or 0)

    def stop_fast(self) -> None:
        subprocess.run(["runuser", "-u", self.user, "--", f"{self.bindir}/pg_ctl", "-D", str(self.dir / "data"),
                        "-m", "fast", "-w", "stop"], check=True, capture_output=True)

    def start(self) -> None:
        subprocess.run([str(self.repo / ".ci/postgres"), "resume", str(self.dir)], check=True, capture_output=True)

    def close(self) -> None:
        subprocess.run([str(self.repo / ".ci/postgres"), "stop", str(self.dir)], capture_output=True)
