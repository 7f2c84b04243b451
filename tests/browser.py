"""Headless Chromium for tests: open a local page with every outside request trapped on loopback."""

import re
import shutil
import socket
import subprocess
import threading
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Chromium's own update/time services: it contacts them on any page, flags or not.
BROWSER_SERVICES = re.compile(r"(^|\.)(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)$")


class RequestTrap:
    """A loopback proxy that records every connection the browser tries to make."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.port = self.server.getsockname()[1]
        self.requests: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection:
                self.requests.append(connection.recv(4096))

    def hosts(self) -> set[str]:
        """Hosts asked for (``GET http://host/…`` or ``CONNECT host:443``)."""
        found = set()
        for request in self.requests:
            match = re.match(rb"[A-Z]+ (?:https?://)?([^/: ]+)", request)
            if match:
                found.add(match.group(1).decode())
        return found

    def close(self):
        self.server.close()


def chromium(page, profile, trap, *extra):
    return subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={profile}",
            f"--proxy-server=127.0.0.1:{trap.port}",
            "--proxy-bypass-list=<-loopback>",
            *extra,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def dump_dom_offline(page: Path, workdir: Path) -> tuple[str, set[str]]:
    """The DOM of `page` after its scripts ran, and the hosts it tried to reach.

    Chromium itself may phone home (time sync) whatever the flags, so an empty page is opened
    with the same trap as a control, and only hosts the page adds beyond that are returned.
    """
    trap = RequestTrap()
    try:
        dom = chromium(
            page, workdir / "profile-page", trap, "--virtual-time-budget=10000", "--dump-dom"
        )
        assert dom.returncode == 0, dom.stderr[-2000:]
        page_hosts = trap.hosts()
        trap.requests.clear()
        blank = workdir / "blank.html"
        blank.write_text("<!DOCTYPE html><title>blank</title>")
        chromium(
            blank, workdir / "profile-blank", trap, "--virtual-time-budget=10000", "--dump-dom"
        )
        browser_hosts = trap.hosts()
    finally:
        trap.close()
    return dom.stdout, {h for h in page_hosts - browser_hosts if not BROWSER_SERVICES.search(h)}
