"""The engine: runs models and stores results (packs, models, tasks, hidden states, scoring,
layer removal, the result cache). Imports only ``lrd.engine``, ``lrd.tables`` and
``lrd._version``; nothing is imported here, so ``import lrd.engine.store`` stays light."""
