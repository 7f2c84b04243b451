"""A real single-node SLURM cluster for tests: munged, slurmctld and slurmd on this machine.

The daemons run in the foreground as our own child processes, so teardown stops exactly the
processes this module started (by PID), also when a test fails. The configuration goes to the
default path /etc/slurm/slurm.conf (removed again at teardown), not to $SLURM_CONF: the executor
plugin's job step strips every SLURM_* variable before its inner `srun`, so a cluster that is
only reachable through $SLURM_CONF fails there. A machine with its own slurm.conf is left
alone. The node advertises one fake GPU (gres backed by /dev/null) so rules that request `gpu`
are scheduled as on a GPU cluster.
Runnable by hand too: ``python -m tests.slurm_cluster`` starts a cluster and waits for Ctrl-C.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo")
# squeue forgets a finished job after MinJobAge seconds; the executor plugin polls squeue when
# there is no accounting database, so this must exceed 3 x its first-check delay (profile).
MIN_JOB_AGE = 600
CONF_DIR = Path("/etc/slurm")
# one test cluster per machine at a time: they share /etc/slurm (concurrent pytest runs wait)
LOCK = Path("/run/lock/mlrep-test-slurm.lock")
MARKER = "# written by mlrep's tests/slurm_cluster.py"


def unavailable() -> str | None:
    """Why a test cluster cannot run here, or None."""
    missing = [
        name
        for name in DAEMONS
        if shutil.which(name) is None and not Path("/usr/sbin", name).exists()
    ]
    if missing:
        return f"slurm-wlm/munge not installed (missing {missing}); .ci/run installs them"
    if os.geteuid() != 0:
        return "starting munged and slurmd needs root"
    conf = CONF_DIR / "slurm.conf"
    if conf.exists() and MARKER not in conf.read_text():
        return f"{conf} belongs to this machine's own SLURM"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024 // 2
    raise RuntimeError("no MemTotal in /proc/meminfo")


class LocalSlurm:
    """Start with `start()`, stop with `stop()`; `env` has SLURM_CONF for client commands."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.host = socket.gethostname().split(".")[0]
        self.conf = CONF_DIR / "slurm.conf"
        self.env = dict(os.environ)
        self._procs: list[subprocess.Popen] = []
        self._lock: int | None = None

    def _write_config(self) -> None:
        if self.conf.exists() and MARKER not in self.conf.read_text():
            raise RuntimeError(f"{self.conf} belongs to this machine's own SLURM; not touching it")
        CONF_DIR.mkdir(parents=True, exist_ok=True)
        for sub in ("state", "spool"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        r = self.root
        self.conf.write_text(f"""{MARKER}
ClusterName=mlreptest
SlurmctldHost={self.host}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
SchedulerType=sched/backfill
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/slurmctld.log
SlurmdLogFile={r}/slurmd.log
SlurmUser=root
SlurmdUser=root
ReturnToService=2
MinJobAge={MIN_JOB_AGE}
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
DefMemPerCPU=1000
NodeName={self.host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={_memory_mb()} \
Gres=gpu:1 State=UNKNOWN
PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
""")
        (CONF_DIR / "gres.conf").write_text(
            f"{MARKER}\nAutoDetect=off\nNodeName={self.host} Name=gpu File=/dev/null\n"
        )

    def _spawn(self, *cmd: str) -> None:
        log = open(self.root / f"{Path(cmd[0]).name}.stdout", "ab")  # noqa: SIM115
        self._procs.append(
            subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env)
        )

    def start(self, timeout: float = 60) -> None:
        LOCK.parent.mkdir(parents=True, exist_ok=True)
        self._lock = os.open(LOCK, os.O_CREAT | os.O_RDWR)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self._write_config()
        if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode != 0:
            run_dir = Path("/run/munge")
            run_dir.mkdir(parents=True, exist_ok=True)
            shutil.chown(run_dir, "munge", "munge")
            self._spawn(
                "setpriv",
                "--reuid=munge",
                "--regid=munge",
                "--init-groups",
                "/usr/sbin/munged",
                "--foreground",
            )
        self._spawn("/usr/sbin/slurmctld", "-D", "-f", str(self.conf))
        self._spawn("/usr/sbin/slurmd", "-D", "-f", str(self.conf), "-N", self.host)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = subprocess.run(
                ["sinfo", "-h", "-o", "%T"],
                capture_output=True,
                text=True,
                env=self.env,
                timeout=10,
            )
            if state.stdout.strip() == "idle":
                return
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"SLURM node not idle after {timeout}s; logs in {self.root}")

    def stop(self) -> None:
        for proc in reversed(self._procs):
            proc.terminate()
        for proc in reversed(self._procs):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        self._procs.clear()
        for name in ("slurm.conf", "gres.conf"):
            path = CONF_DIR / name
            if path.exists() and MARKER in path.read_text():
                path.unlink()
        if self._lock is not None:
            os.close(self._lock)  # releases the flock
            self._lock = None

    def job_field(self, job_id: str, field: str) -> str | None:
        """One field of `scontrol show job`, None when absent (jobs stay visible MinJobAge s)."""
        for _ in range(5):  # the controller can be briefly busy while a job finishes
            result = subprocess.run(
                ["scontrol", "show", "job", job_id],
                capture_output=True,
                text=True,
                env=self.env,
                timeout=10,
            )
            if result.returncode == 0:
                break
            time.sleep(1)
        else:
            raise RuntimeError(f"scontrol show job {job_id}: {result.stderr.strip()}")
        for token in result.stdout.split():
            if token.startswith(f"{field}="):
                return token.split("=", 1)[1]
        return None


if __name__ == "__main__":
    import tempfile

    cluster = LocalSlurm(Path(tempfile.mkdtemp(prefix="mlrep-slurm-")))
    cluster.start()
    print(f"SLURM is up ({cluster.conf}); Ctrl-C stops it")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        cluster.stop()
