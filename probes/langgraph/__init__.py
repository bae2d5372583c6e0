"""LangGraph 1.2.9 adapter: probes for every Resume Contract property on three savers.

Modules: ``savers`` (the one saver factory, the parking and dropping delegates),
``workloads`` (graphs, functional workflows and the protocol steps run in-process or
in a fresh interpreter), ``probes`` (one function per probe kind, turning observations
into verdicts through ``probes.core.checker``), ``campaign`` (parameters, plan,
headlines) and ``versions`` (the on-demand version sweep). Frameworks are imported
inside functions only, so importing this package stays cheap.
"""
