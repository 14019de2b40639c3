"""The papers' procedures on top of the engine and the metrics: the MTEB protocol on every
layer (``evaluate``), the metric suite (``suite``), removal sweeps and relevance
(``relevance``), pruning rules and plans (``pruning``), the counterexample (``counterexample``).
Imports only ``lrd.engine``, ``lrd.metrics``, ``lrd.tables`` and itself."""
