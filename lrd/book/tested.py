"""What a verdict tests, in one place: the paper's words, the book's operationalisation, every rule
with its value, the panel it ran on, and whether the book's own choices decide it.

:meth:`lrd.book.glue.Glue.judge` adds to each verdict record what :func:`context` computes from
the tables the judge read: ``robust`` and ``flips`` (the verdict judged again under each
alternative of each of the book's rules, :func:`lrd.verdicts.sensitivity.sensitivity`), ``rules``
(every rule of the claim's specification at the value the chapter used) and ``llm_panel`` (the
language models among the models judged, named by what their packs state: size, tuning, weights).
:func:`details_markdown` renders a record as the fold that the chapter shows under its verdict and
the dashboard under each claim's label; :func:`sensitivity_text` is the one line of it that the
chapter's glued verdict text ends with.

A record written before these fields existed reads as "not checked" (``robust`` None).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from lrd.book import markup
from lrd.book.specs import rule_value, short_value

__all__ = ["context", "details_markdown", "fold_html", "levels_text", "llm_panel", "models_in", "sensitivity_text", "summary_text"]

#: A parameter count in a model's upstream name ("SmolLM2-135M-Instruct", "Qwen2.5-Coder-1.5B").
_SIZE = re.compile(r"(?<![A-Za-z\d.])(\d+(?:\.\d+)?)\s?([MB])(?![A-Za-z])", re.IGNORECASE)


def models_in(tables: Mapping[str, Any]) -> list[str]:
    """The model names a judge's tables hold, in first-seen order: every value of a table's
    ``model`` column and a ``model`` entry that is a name.

    >>> import pandas as pd
    >>> models_in({"scores": pd.DataFrame({"model": ["qwen", "minilm", "qwen"]}), "model": "smollm2", "x": 1.0})
    ['qwen', 'minilm', 'smollm2']
    """
    found: list[str] = []
    for name, value in tables.items():
        columns = getattr(value, "columns", None)
        if columns is not None and "model" in columns:
            found += [str(m) for m in value["model"].dropna().unique()]
        elif name == "model" and isinstance(value, str):
            found.append(value)
    return list(dict.fromkeys(found))


def _size(upstream: str) -> str | None:
    """The parameter count an upstream name states ("135M", "1.5B"), or None.

    >>> _size("Qwen/Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M)"), _size("google/gemma-3-270m (base)"), _size("x")
    ('1.5B', '270M', None)
    """
    found = _SIZE.findall(upstream.split("/")[-1])
    return f"{found[-1][0]}{found[-1][1].upper()}" if found else None


def _count(size: str) -> float:
    return float(size[:-1]) * (1e9 if size.endswith("B") else 1e6)


def llm_panel(models: Iterable[str], *, packs: Mapping[str, Any] | None = None) -> str | None:
    """The language models among ``models``, named honestly from what their packs state
    (:data:`lrd.engine.packs.MODEL_PACKS`: the upstream model, its size, ``tuning`` and what was
    done to its ``weights``); None when none of them is a language model (a decoder pack).

    >>> from types import SimpleNamespace as P
    >>> packs = {"a": P(upstream="org/Tiny-135M-Instruct (GGUF Q4_1)", info={"kind": "decoder", "tuning": "instruct",
    ...                 "weights": "GGUF Q4_1 dequantised to fp32"}),
    ...          "e": P(upstream="org/enc", info={"kind": "encoder"})}
    >>> print(llm_panel(["e", "a"], packs=packs))
    1 language model, 135M parameters, instruct-tuned rather than base, dequantised from GGUF: Tiny-135M-Instruct (135M parameters; instruct; GGUF Q4_1 dequantised to fp32)
    >>> llm_panel(["e"], packs=packs) is None
    True
    """
    if packs is None:
        from lrd.engine.packs import MODEL_PACKS as packs
    llms = [(m, packs[m]) for m in models if m in packs and packs[m].info.get("kind") == "decoder"]
    if not llms:
        return None
    sizes = [_size(p.upstream) for _, p in llms]
    tunings = [p.info.get("tuning", "tuning not stated") for _, p in llms]
    gguf = ["GGUF" in p.info.get("weights", "") for _, p in llms]

    def share(flags: list[bool], words: str) -> str | None:
        n = sum(flags)
        return None if not n else words if n == len(flags) else f"{n} of them {words}"

    known = sorted((s for s in sizes if s), key=_count)
    span = None if not known else known[0] if known[0] == known[-1] else f"{known[0]}-{known[-1]}"
    traits = [t for t in (f"{span} parameters" if span else None,
                          share([t == "instruct" for t in tunings], "instruct-tuned rather than base"),
                          share(gguf, "dequantised from GGUF")) if t]
    named = "; ".join(f"{p.upstream.split('/')[-1].split(' (')[0]} ("
                      + "; ".join(x for x in ((f"{s} parameters" if s else "size not stated"), t,
                                              p.info.get("weights")) if x) + ")"
                      for (_, p), s, t in zip(llms, sizes, tunings))
    head = f"{len(llms)} language model{'s' if len(llms) > 1 else ''}"
    return ", ".join([head, *traits]) + f": {named}"


def context(claim_id: str, tables: Mapping[str, Any], verdict, *, note: str | None = None,
            choices: Mapping[str, Any] | None = None) -> dict:
    """The record fields that say what ``verdict`` tested and whether the book's choices decide it:
    ``robust`` (bool), ``flips`` (``[{"rule", "label", "value", "outcome"}]``, the alternatives of
    the book's rules that give another outcome), ``rules`` (every rule of the claim's
    specification at the value used: ``{"name", "label", "value", "origin", "alternatives",
    "reason"}``, values as the specifications page writes them) and ``llm_panel``
    (:func:`llm_panel` of the tables' models)."""
    from lrd.verdicts.sensitivity import sensitivity
    from lrd.verdicts.specifications import specification

    choices = dict(choices or {})
    spec = specification(claim_id)
    s = sensitivity(claim_id, tables, note=note, primary=verdict, **choices)
    labels = {r.name: r.label or r.name for r in spec.rules}
    rules = [{"name": r.name, "label": r.label or r.name, "value": rule_value(choices.get(r.name, r.value)),
              "origin": r.origin, "alternatives": [rule_value(v) for v in r.alternatives], "reason": r.reason}
             for r in spec.rules]
    flips = [{"rule": a.rule, "label": labels.get(a.rule, a.rule), "value": short_value(a.value), "outcome": a.outcome}
             for a in s.flips]
    levels = [{"value": rule_value(a.value), "outcome": a.outcome} for a in s.at_other_levels]
    return {"robust": s.robust, "flips": flips, "n_alternatives": len(s.counted), "levels": levels, "rules": rules,
            "llm_panel": llm_panel(models_in(tables))}


def sensitivity_text(record: Mapping[str, Any]) -> str:
    """The sensitivity of a verdict in one line: robust to how many alternatives of the book's
    rules, or which ones give another outcome; "not checked" for a record without it.

    >>> sensitivity_text({"robust": True, "n_alternatives": 4})
    "robust: the same outcome under each of the 4 alternatives of the book's rules"
    >>> sensitivity_text({"robust": False, "n_alternatives": 4,
    ...                   "flips": [{"rule": "margin", "label": "margin", "value": "0.01", "outcome": "inconclusive"}]})
    "not robust: margin = 0.01 gives 'inconclusive' (1 of the 4 alternatives of the book's rules)"
    >>> sensitivity_text({"robust": True, "n_alternatives": 0})
    'robust: no rule of the book decides it'
    >>> sensitivity_text({})
    "sensitivity not checked (the record predates it, or the verdict was recorded without the judge's tables)"
    """
    if record.get("robust") is None:
        return ("sensitivity not checked (the record predates it, or the verdict was recorded without the judge's "
                "tables)")
    n = record.get("n_alternatives") or 0
    if record["robust"]:
        text = ("robust: no rule of the book decides it" if not n
                else "robust: the same outcome under the one alternative of the book's rules" if n == 1
                else f"robust: the same outcome under each of the {n} alternatives of the book's rules")
    else:
        flips = record.get("flips") or []
        shown = "; ".join(f"{f['label']} = {f['value']} gives '{f['outcome']}'" for f in flips)
        text = f"not robust: {shown} ({len(flips)} of the {n} alternative{'s' if n != 1 else ''} of the book's rules)"
    return text + levels_text(record)


def levels_text(record: Mapping[str, Any]) -> str:
    """What the verdict would say at the other test levels, where that differs (shown, not counted:
    :data:`lrd.verdicts.sensitivity.LEVEL_RULE`); empty otherwise.

    >>> levels_text({"outcome": "reproduced", "levels": [{"value": "0.01", "outcome": "inconclusive"},
    ...                                                   {"value": "0.1", "outcome": "reproduced"}]})
    "; at level alpha = 0.01 it would read 'inconclusive' (the level is not counted: the headline adjusts it for multiplicity)"
    >>> levels_text({"outcome": "reproduced", "levels": [{"value": "0.1", "outcome": "reproduced"}]})
    ''
    """
    other = [lv for lv in record.get("levels") or [] if lv["outcome"] != record.get("outcome")]
    if not other:
        return ""
    shown = ", ".join(f"alpha = {lv['value']} it would read '{lv['outcome']}'" for lv in other)
    return f"; at level {shown} (the level is not counted: the headline adjusts it for multiplicity)"


def _rules_lines(rules: list[dict]) -> list[str]:
    lines = []
    for r in rules:
        whose = "the paper's" if r["origin"] == "paper" else "the book's"
        text = f"- {markup.text(r['label'])} = {markup.code(r['value'])} ({whose}"
        if r["origin"] == "book":
            others = ", ".join(markup.code(v) for v in r.get("alternatives") or []) or "none"
            text += f"; alternatives tried: {others}"
        text += ")"
        if r["origin"] == "book" and r.get("reason"):
            text += f": {markup.text(r['reason'])}"
        lines.append(text)
    return lines


def details_markdown(record: Mapping[str, Any], *, spec_ref: bool = False) -> str:
    """What a verdict record tests, as MyST markdown (the body of a fold): the paper's words and
    source, the scope it states, the book's operationalisation (estimand, unit, test, from the
    claim's specification), the language models of the panel (:func:`llm_panel`), every rule with
    its value (the book's with their alternatives and reason), and :func:`sensitivity_text`.
    Every text is escaped (:mod:`lrd.book.markup`); ``spec_ref`` links the claim's entry on the
    specifications page (:func:`lrd.book.specs.anchor`; only in a book that has that page)."""
    from lrd.verdicts.specifications import SPECIFICATIONS

    spec = SPECIFICATIONS.get(record.get("claim"))
    lines = []
    if record.get("claim_text"):
        source = f" ({markup.text(record['claim_source'])})" if record.get("claim_source") else ""
        lines.append(f"**The paper.** “{markup.text(record['claim_text'])}”{source}")
    if spec is not None:
        lines.append(f"**Its scope.** {markup.text(spec.scope)}")
        lines.append("**Tested here.** " + " ".join(f"{name}{markup.text(str(t).rstrip('. '))}." for name, t in
                                                    (("", spec.estimand), ("Unit: ", spec.unit), ("Test: ", spec.test))))
    if record.get("llm_panel"):
        lines.append(f"**The language models.** {markup.text(record['llm_panel'])}.")
    rules = record.get("rules")
    if rules:
        lines.append("**Its rules.**")
        lines.append("\n".join(_rules_lines(rules)))
    elif rules is not None:
        lines.append("**Its rules.** The judge uses no number or choice beyond its tables.")
    lines.append(f"**Sensitivity.** {markup.text(sensitivity_text(record).capitalize())}.")
    if record.get("reexecution"):
        lines.append(f"**Re-executed** (recorded builds of earlier commits, named in each build's name: their "
                     f"outcome is the code's of then, which may differ from this verdict; the manual's re-execution "
                     f"section lists them). {markup.text(record['reexecution'][0].upper() + record['reexecution'][1:])}.")
    if spec_ref and record.get("claim"):
        from lrd.book.specs import anchor

        lines.append(f"{{ref}}`The claim's whole specification <{anchor(record['claim'])}>`.")
    return "\n\n".join(lines)


def summary_text(record: Mapping[str, Any]) -> str:
    """The closed fold's words: what it holds and, in a word, the verdict's sensitivity.

    >>> summary_text({"robust": False}), summary_text({"robust": True}), summary_text({})
    ('what is tested · not robust', 'what is tested · robust', 'what is tested')
    """
    robust = record.get("robust")
    return "what is tested" + ("" if robust is None else " · robust" if robust else " · not robust")


def fold_html(record: Mapping[str, Any], *, indent: str = "", spec_ref: bool = False) -> list[str]:
    """:func:`details_markdown` in a ``<details>`` fold (closed: one line, :func:`summary_text`), as
    MyST lines indented by ``indent`` (a list-table cell's continuation): raw HTML opens and closes
    the fold, the markdown between is parsed as the page's own."""
    body = details_markdown(record, spec_ref=spec_ref)
    summary = summary_text(record).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    lines = ["", f'<details class="lrd-tested"><summary>{summary}</summary>', "", *body.splitlines(), "",
             "</details>"]
    return [indent + line if line else "" for line in lines]
