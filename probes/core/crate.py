"""A run's provenance as a machine can read it: an RO-Crate (Workflow Run Crate profile).

Every run directory (``runs/<campaign>/<run id>/``, and the staged copy of a shown run in
the book) gets ``ro-crate-metadata.json``, written with the ``rocrate`` package from what
the run itself recorded -- its index (``_campaign.json``: parameters, commit, dates,
receipt hashes) and its receipts' manifests (package versions, Python, platform,
machine) -- never from what this process happens to have installed. The crate says:

* the **workflow**: the campaign's definition (``probes/frameworks/<name>/campaign.py`` ..., copied
  into ``workflow/`` so the crate is self-contained), its version = the commit measured,
  its software requirements = the package versions the receipts recorded;
* one **run** (``CreateAction``): start and end time, the parameters as
  ``PropertyValue`` objects (each an example of a ``FormalParameter`` of the workflow),
  and as results every receipt, the verdict view, the index, the figures and their
  sidecars, and the executed chapter when one was rendered into the run;
* the **machine**: Python, platform and processor, as the receipts recorded them.

Profiles: Process Run Crate 0.6, Workflow Run Crate 0.6, Workflow RO-Crate 1.1 (the
versions ``rocrate`` pins for the RO-Crate version it writes are checked by
``profile_problems``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterable

from probes import PROJECT_ROOT
from probes.core.errors import UsageError
from probes.core.atomic import atomic_write_bytes, atomic_write_json
from probes.core.receipt import INDEX_NAME, VIEW_NAME

CRATE_NAME = "ro-crate-metadata.json"
PROCESS_RUN = "https://w3id.org/ro/wfrun/process/0.6"
WORKFLOW_RUN = "https://w3id.org/ro/wfrun/workflow/0.6"
WORKFLOW_RO_CRATE = "https://w3id.org/workflowhub/workflow-ro-crate/1.1"
PROFILES = (PROCESS_RUN, WORKFLOW_RUN, WORKFLOW_RO_CRATE)
LICENSE = "https://spdx.org/licenses/Apache-2.0"
CHAPTER = "chapter.ipynb"
CHAPTER_META = "_chapter.json"
FIGURES = "figures"
WORKFLOW_DIR = "workflow"
_FORMATS = {".json": "application/json", ".png": "image/png", ".svg": "image/svg+xml",
            ".ipynb": "application/x-ipynb+json", ".py": "text/x-python"}


def _receipt_manifests(directory: Path, probes: Iterable[str]) -> list[dict[str, Any]]:
    out = []
    for probe in probes:
        try:
            out.append(json.loads((directory / f"{probe}.json").read_text()).get("manifest") or {})
        except (OSError, json.JSONDecodeError):
            continue
    return out


def _first(manifests: list[dict[str, Any]], key: str) -> Any:
    return next((m[key] for m in manifests if m.get(key)), None)


def _packages(manifests: list[dict[str, Any]]) -> dict[str, str]:
    """Every package version the receipts recorded (several versions kept, comma-joined)."""
    seen: dict[str, list[str]] = {}
    for m in manifests:
        for name, version in (m.get("packages") or {}).items():
            if version and version not in seen.setdefault(name, []):
                seen[name].append(version)
    return {name: ", ".join(versions) for name, versions in sorted(seen.items()) if versions}


def campaign_source(campaign: str) -> Path | None:
    """The campaign's definition module in this checkout, if it has one (a kit adapter run from
    elsewhere has none): ``probes/frameworks/langgraph/campaign.py`` for ``langgraph``."""
    from probes import campaigns

    if campaign not in campaigns.registry():
        return None
    path = PROJECT_ROOT / campaigns.definition(campaign)
    return path if path.is_file() else None


def write_crate(directory: Path, workflow_source: Path | None = None) -> Path:
    """Write ``<directory>/ro-crate-metadata.json`` for the complete run in ``directory``.

    ``directory`` has a run's layout (index, receipts, view, optional ``figures/`` and
    chapter); ``workflow_source`` defaults to the campaign's definition module, copied
    to ``workflow/campaign.py`` inside the directory. Returns the crate file.
    """
    from rocrate.model.computerlanguage import ComputerLanguage
    from rocrate.model.contextentity import ContextEntity
    from rocrate.rocrate import ROCrate

    directory = Path(directory)
    index = json.loads((directory / INDEX_NAME).read_text())
    campaign = index.get("campaign") or directory.parent.name
    prov = index.get("provenance") or {}
    probes = sorted(index.get("receipts") or {})
    manifests = _receipt_manifests(directory, probes)
    commit = prov.get("commit") or _first(manifests, "commit") or "unknown"

    crate = ROCrate(gen_preview=False)
    root = crate.root_dataset
    root["name"] = f"{campaign}: run {index.get('run_id', directory.name)}"
    root["description"] = (f"Receipts, verdicts and figures of the {campaign!r} campaign of the Resume Contract "
                           f"suite, measured at commit {commit} ({index.get('profile', 'default')} profile).")
    root["license"] = LICENSE
    if prov.get("finished"):
        root["datePublished"] = prov["finished"]

    def add_file(rel: str, **props: Any) -> Any:
        path = directory / rel
        props.setdefault("encodingFormat", _FORMATS.get(path.suffix, "application/octet-stream"))
        props.setdefault("contentSize", str(path.stat().st_size))
        return crate.add_file(path, dest_path=rel, properties=props)

    source = workflow_source or campaign_source(campaign)
    workflow_rel = f"{WORKFLOW_DIR}/campaign.py"
    if source is not None:
        (directory / WORKFLOW_DIR).mkdir(exist_ok=True)
        atomic_write_bytes(directory / workflow_rel, Path(source).read_bytes())
    else:  # no definition module: the workflow is described by the index alone
        workflow_rel = INDEX_NAME
    language = crate.add(ComputerLanguage(crate, "https://www.python.org/", properties={
        "name": "Python", "url": {"@id": "https://www.python.org/"}}))
    python = crate.add(ContextEntity(crate, "#python", properties={
        "@type": "SoftwareApplication", "name": "Python",
        "softwareVersion": _first(manifests, "python") or prov.get("python") or "unknown"}))
    packages = [crate.add(ContextEntity(crate, f"#package-{name}", properties={
        "@type": "SoftwareApplication", "name": name, "softwareVersion": version,
        "url": f"https://pypi.org/project/{name}/{version.split(',')[0]}/"}))
        for name, version in _packages(manifests).items()]
    machine = crate.add(ContextEntity(crate, "#machine", properties={
        "@type": "SoftwareApplication", "name": "the machine the run measured on",
        "operatingSystem": _first(manifests, "platform") or prov.get("platform") or "unknown",
        "processorRequirements": _first(manifests, "machine") or "unknown"}))
    parameters = {name: crate.add_formal_parameter(name=name, additionalType=_param_type(value),
                                                   identifier=f"#param-{name}")
                  for name, value in (index.get("params") or {}).items()}
    workflow = crate.add_workflow(directory / workflow_rel, dest_path=workflow_rel, main=True, lang=language,
                                  properties={"name": f"{campaign} campaign", "version": commit,
                                              "encodingFormat": _FORMATS.get(Path(workflow_rel).suffix),
                                              "input": [{"@id": p.id} for p in parameters.values()],
                                              "softwareRequirements": [{"@id": e.id} for e in
                                                                       (python, machine, *packages)]})
    root["conformsTo"] = [{"@id": p} for p in PROFILES]  # after add_workflow, which sets its own
    values = [crate.add(ContextEntity(crate, f"#value-{name}", properties={
        "@type": "PropertyValue", "name": name, "value": json.dumps(value, ensure_ascii=False),
        "exampleOfWork": {"@id": parameters[name].id}}))
        for name, value in (index.get("params") or {}).items()]

    results = [add_file(f"{p}.json", name=f"receipt {p}", sha256=(index.get("receipts") or {}).get(p))
               for p in probes if (directory / f"{p}.json").exists()]
    results += [add_file(rel, name=what) for rel, what in ((VIEW_NAME, "verdict view"), (INDEX_NAME, "campaign index"))
                if (directory / rel).exists() and rel != workflow_rel]
    if (directory / CHAPTER).exists():
        results.append(add_file(CHAPTER, name=f"executed chapter of {campaign}"))
        if (directory / CHAPTER_META).exists():
            results.append(add_file(CHAPTER_META, name="chapter stamp"))
    figures = directory / FIGURES
    if figures.is_dir():
        for path in sorted(figures.iterdir()):
            if path.suffix in (".png", ".svg", ".json"):
                results.append(add_file(f"{FIGURES}/{path.name}", name=f"figure {path.stem} ({path.suffix[1:]})"))

    action_props: dict[str, Any] = {"name": f"Run of the {campaign} campaign at commit {commit}",
                                    "actionStatus": {"@id": "http://schema.org/CompletedActionStatus"}}
    if prov.get("started"):
        action_props["startTime"] = prov["started"]
    if prov.get("finished"):
        action_props["endTime"] = prov["finished"]
    if index.get("harness_errors"):
        action_props["actionStatus"] = {"@id": "http://schema.org/FailedActionStatus"}
        action_props["error"] = f"{index['harness_errors']} harness error(s); see the receipts"
    action = crate.add_action(workflow, identifier=f"#run-{index.get('run_id', directory.name)}", object=values,
                     result=results, properties=action_props)
    root["mentions"] = [action]
    atomic_write_json(directory / CRATE_NAME, crate.metadata.generate())
    return directory / CRATE_NAME


def crate_copy(run: Path, target: Path) -> Path:
    """A crate for a run that cannot be written into (the committed reference run): the
    run's files (receipts, index, view, chapter, figures) copied into ``target``, then
    ``write_crate(target)``. Refuses a run that is not complete (no index)."""
    import shutil

    run, target = Path(run), Path(target)
    index_path = run / INDEX_NAME
    if not index_path.is_file():
        raise UsageError(f"{run} is not a complete run directory (no {INDEX_NAME})")
    if target.resolve() == run.resolve():
        return write_crate(run)
    target.mkdir(parents=True, exist_ok=True)
    index = json.loads(index_path.read_text())
    names = [f"{p}.json" for p in index.get("receipts") or {}] + [INDEX_NAME, VIEW_NAME, CHAPTER, CHAPTER_META]
    for name in names:
        if (run / name).is_file():
            shutil.copy2(run / name, target / name)
    if (run / FIGURES).is_dir():
        (target / FIGURES).mkdir(exist_ok=True)
        for path in (run / FIGURES).iterdir():
            if path.is_file():
                shutil.copy2(path, target / FIGURES / path.name)
    return write_crate(target)


def write_crate_after_run(directory: Path) -> Path | None:
    """``write_crate`` when a campaign run completes; an installed kit without ``rocrate``
    (the ``provenance`` extra) says so on stderr and goes on -- the receipts are the result."""
    try:
        import rocrate  # noqa: F401
    except ImportError:
        print(f"note: no {CRATE_NAME} for {directory}: the rocrate package is not installed "
              "(pip install 'resume-contract[provenance]')", file=sys.stderr)
        return None
    return write_crate(directory)


def _param_type(value: Any) -> str:
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, int):
        return "Integer"
    if isinstance(value, float):
        return "Float"
    if isinstance(value, str):
        return "Text"
    return "Collection"


def profile_problems(directory: Path) -> list[str]:
    """What the crate in ``directory`` lacks of the Workflow Run Crate profile's MUSTs
    (roc-validator cannot be installed beside this project's pins: it requires rich<14).

    Read back with ``rocrate``'s own reader, so a crate it cannot parse fails here too.
    """
    from rocrate.rocrate import ROCrate

    problems: list[str] = []
    crate = ROCrate(str(directory))
    root = crate.root_dataset
    conforms = {c.get("@id") if isinstance(c, dict) else getattr(c, "id", c)
                for c in _as_list(root.get("conformsTo"))}
    problems += [f"root does not conform to {p}" for p in PROFILES if p not in conforms]
    for key in ("name", "description", "license", "datePublished"):
        if not root.get(key):
            problems.append(f"root dataset has no {key}")
    main = crate.mainEntity
    if main is None:
        return problems + ["no mainEntity"]
    types = set(_as_list(main.type))
    for needed in ("File", "SoftwareSourceCode", "ComputationalWorkflow"):
        if needed not in types:
            problems.append(f"mainEntity is not a {needed}")
    if not (Path(directory) / main.id).is_file():
        problems.append(f"mainEntity {main.id} is not in the crate")
    if main not in _as_list(root.get("hasPart")):
        problems.append("mainEntity not in the root's hasPart")
    if not main.get("programmingLanguage"):
        problems.append("mainEntity has no programmingLanguage")
    actions = [e for e in crate.contextual_entities if "CreateAction" in _as_list(e.type)]
    if not actions:
        return problems + ["no CreateAction"]
    mentioned = _as_list(root.get("mentions"))
    for action in actions:
        if action not in mentioned:
            problems.append(f"action {action.id} not in the root's mentions")
        if action.get("instrument") is not main:
            problems.append(f"action {action.id}'s instrument is not the mainEntity")
        for key in ("name", "startTime", "endTime"):
            if not action.get(key):
                problems.append(f"action {action.id} has no {key}")
        for value in _as_list(action.get("object")):
            work = value.get("exampleOfWork") if hasattr(value, "get") else None
            if work is None or "FormalParameter" not in _as_list(work.type):
                problems.append(f"parameter {getattr(value, 'id', value)} is not an example of a FormalParameter")
            elif work not in _as_list(main.get("input")):
                problems.append(f"parameter {value.id}'s FormalParameter is not an input of the workflow")
        for result in _as_list(action.get("result")):
            if not (Path(directory) / result.id).is_file():
                problems.append(f"result {result.id} is not in the crate")
            elif result not in _as_list(root.get("hasPart")):
                problems.append(f"result {result.id} not in the root's hasPart")
    return problems


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
