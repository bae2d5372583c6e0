"""What a campaign notebook calls: run the campaign with the notebook's parameters.

A notebook is thin: a ``parameters`` cell (papermill), one call to ``run_notebook``
and tables and figures built from the returned receipts.

Where results go is decided here, not in the notebook: a run measures into its own
local run directory (``runs/<campaign>/<profile>-<fingerprint>/``, see
``probes.core.runs``) and its figures go to that directory's ``figures/``. With
``RC_RENDER_FROM=<directory>`` nothing is measured: the receipts of that directory (the
reference run, say) are loaded, and figures go to ``RC_FIGURES_DIR`` or a scratch
directory -- never into the results being rendered.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

from probes import campaigns, figures
from probes.core.campaign import CampaignRun, run_campaign


def figure_provenance(campaign: Any, result: CampaignRun) -> dict[str, Any]:
    """What a figure's sidecar records: commit, date, receipts' fingerprint, the command."""
    import datetime as dt

    from probes.core.manifest import project_commit
    from probes.core.receipt import read_index
    from probes.core.runs import profile_of

    index = read_index(result.directory) or {}
    changed = campaign.changed_params(result.params)
    if profile_of(campaign, result.params) == "quick":
        command = f"./reproduce.sh --quick --only {campaign.name}"
    else:
        command = " ".join([f"./reproduce.sh --only {campaign.name}"] +
                           [f"-p {k} '{json.dumps(v)}'" for k, v in changed.items()])
    prov = index.get("provenance", {})
    return {"campaign": campaign.name, "run": index.get("run_id", result.directory.name),
            "receipts_fingerprint": result.fingerprint,
            "commit": prov.get("commit") or project_commit(),
            "measured_on": prov.get("date") or dt.date.today().isoformat(),
            "regenerate": command}


def run_notebook(name: str, namespace: Mapping[str, Any]) -> CampaignRun:
    """Run (or resume, or just load) campaign ``name`` with the parameters found in ``namespace``."""
    campaign = campaigns.get(name)
    overrides = {p.name: namespace[p.name] for p in campaign.params if p.name in namespace}
    params = campaign.resolve(overrides)
    explicit_root = os.environ.get("RC_RECEIPTS_DIR")
    result = run_campaign(campaign, params, Path(explicit_root) if explicit_root else None)
    if os.environ.get("RC_RENDER_FROM"):
        target = os.environ.get("RC_FIGURES_DIR") or tempfile.mkdtemp(prefix=f"rc-figures-{name}-")
    else:
        target = os.environ.get("RC_FIGURES_DIR") or str(result.directory / "figures")
    figures.set_directory(Path(target), figure_provenance(campaign, result))
    if result.harness_errors:
        print(f"{len(result.harness_errors)} harness error(s) -- measurements, not verdicts:")
        for error in result.harness_errors:
            print("  ", error)
    return result
