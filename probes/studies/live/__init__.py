"""Live reproduction: the deterministic LangGraph protocols with real model traffic.

The deterministic campaigns decide what a framework does; this package asks whether
putting a language model in the loop (as the reviewer answering an interrupt, as the
worker acting on the answer, as a tool-calling agent whose session is restored)
hides or creates any of those verdicts. Modules:

* ``providers`` -- which client to build for a model, and where its key comes from
  (environment variables only; a key never enters a receipt, a log or the book);
* ``calls``     -- one guarded model call: the per-run cap on calls and tokens,
  tool-call validation, and the classification of harness errors;
* ``scripted``  -- a scripted chat model that emits tool calls without a network,
  used for tests, the offline ``scripted`` provider and each cell's control trial;
* ``protocols`` -- fork (#6663), interrupt approval + stray resume, session restore;
* ``stats``     -- Wilson intervals and the pooled tables;
* ``campaign``  -- the ``live`` campaign; ``report`` -- tables and figures for the book.
"""

# Frameworks this study imports (top-level import names; "*" is every one), each with why (probes.layers).
ALSO_IMPORTS = {'langgraph': 'the deterministic LangGraph protocols, with real model traffic'}
