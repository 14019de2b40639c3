"""Aggregating all layers (Ulanovski et al.): the Cayley graph (``cayley``), the encoders and
baselines (``encoders``), seeded training (``training``), scores and per-item outcomes
(``scores``), their summaries (``summary``) and memory (``memory``). Pure torch and numpy on
given states: imports only ``lrd.aggregation`` and ``lrd.tables``."""
