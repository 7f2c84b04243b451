"""Print the rules of the workflow in the working folder, or the jobs of a DAG, as JSON lines.

Tests run this in a subprocess, because the Snakefile imports mlrep and the subprocess's
PYTHONPATH decides which copy of mlrep that is. Snakemake has no public listing of the jobs of
a DAG with their output flags (``--summary`` does not say which outputs are directories), so
this reads the workflow object the way ``snakemake --summary`` builds it.

    python tests/workflow_jobs.py rules [--config JSON]
    python tests/workflow_jobs.py jobs TARGET... [--config JSON]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from snakemake.api import SnakemakeApi
from snakemake.io import is_flagged
from snakemake.settings.types import (
    ConfigSettings,
    DAGSettings,
    OutputSettings,
    Quietness,
    ResourceSettings,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("rules", "jobs"))
    parser.add_argument("targets", nargs="*")
    parser.add_argument("--config", type=json.loads, default={}, help="overrides, as JSON")
    args = parser.parse_args()
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
        workflow_api = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(config=args.config),
            snakefile=Path("Snakefile"),
        )
        if args.what == "rules":
            for rule in workflow_api._workflow.rules:
                code = dict(rule.params.items()).get("code")
                print(json.dumps({"rule": rule.name, "shell": rule.shellcmd, "code": code}))
            return
        workflow_api.dag(DAGSettings(targets=set(args.targets), forceall=True))
        workflow = workflow_api._workflow
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True)
        workflow._build_dag()
        dag = workflow.dag
        for job in dag.jobs:
            print(
                json.dumps(
                    {
                        "id": dag.jobid(job),
                        "rule": job.rule.name,
                        "snakefile": str(Path(job.rule.snakefile).relative_to(Path.cwd())),
                        "shell": job.shellcmd,
                        "output": [[str(f), is_flagged(f, "directory")] for f in job.output],
                        "depends": sorted(dag.jobid(d) for d in dag.dependencies[job]),
                    }
                )
            )


if __name__ == "__main__":
    main()
