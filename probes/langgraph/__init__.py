"""The legacy LangGraph probes, kept for the REMIT campaign's LangGraph arm until REMIT's savers run on the kit.

The paper's LangGraph campaign itself runs on the conformance kit (``probes.langgraph_kit``). Modules:
``savers`` (the one saver factory -- stock, ``remit_ref``, ``remit-contract`` -- and the parking and
dropping delegates, also used by the atlas and the consume race), ``workloads`` (graphs, functional
workflows and the protocol steps run in-process or in a fresh interpreter), ``probes`` (one function per
probe kind, turning observations into verdicts through ``probes.core.checker``) and ``plan`` (the REMIT
arm's plan). Frameworks are imported inside functions only, so importing this package stays cheap.
"""
