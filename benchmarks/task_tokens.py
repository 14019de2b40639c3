"""Tokens per text and per multiple-choice item of every offline task (first 300 rows, the qwen
pack's tokenizer, Qwen2.5's): the figures of :data:`lrd.units.cost.TASK_TOKENS`.

    python benchmarks/task_tokens.py      # writes /tmp/toks.json and prints one line per task
"""
import json, numpy as np
from transformers import AutoTokenizer
from lrd.engine.tasks import load_task, OFFLINE_TASKS
from lrd.engine.packs import pack_path
tok = AutoTokenizer.from_pretrained(str(pack_path("qwen", auto_fetch=False)))
out = {}
for t, spec in OFFLINE_TASKS.items():
    d = load_task(t, n=300)
    texts = d.texts
    n_text = float(np.mean([len(tok(x)["input_ids"]) for x in texts]))
    row = {"rows": len(d), "texts_per_row": round(len(texts) / len(d), 3), "tokens_per_text": round(n_text, 1)}
    if spec.type == "multiple_choice":
        f = d.frame
        per = []
        for ctxs, conts in zip(f["contexts"], f["choices"]):
            per.append(sum(len(tok(c + x)["input_ids"]) for c, x in zip(ctxs, conts)))
        row["tokens_per_item_all_choices"] = round(float(np.mean(per)), 1)
        # as scored: choices that share their item's context packed into one row (context once)
        shared = [sum(len(tok(c)["input_ids"]) for c in dict.fromkeys(ctxs)) + sum(len(tok(x)["input_ids"]) for x in conts)
                  for ctxs, conts in zip(f["contexts"], f["choices"])]
        row["tokens_per_item_shared_context"] = round(float(np.mean(shared)), 1)
    out[t] = row
    print(t, row, flush=True)
json.dump(out, open("/tmp/toks.json", "w"), indent=1)
