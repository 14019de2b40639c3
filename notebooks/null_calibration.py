# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Appendix: would a verdict say "reproduced" on noise, or "contradicted" where the paper is right?
#
# Every verdict of this book on a claim judged by a test comes from one function of
# {py:mod}`lrd.verdicts`, the same one the chapter calls. Here each of those functions is fed input
# tables simulated **under the null hypothesis its test assumes**: scores exchangeable across
# layers, models or pruning rules, so that the claim is false by construction. A valid test
# says "reproduced" on at most 5% of such panels (its significance level), up to Monte Carlo
# error. A rule that counts wins, or that reads the absence of an effect as its reproduction,
# fails here: `tests/test_verdicts.py` shows that a count of wins says "reproduced" on noise far
# more often.
#
# The other error matters as much: a "contradicted" verdict is the dashboard's strongest
# statement. Where a claim's simulation of the paper's effect, as the paper states it and at its
# edge (the point where a false "contradicted" is likeliest), is registered, the same judge is
# fed those panels too and the share of "contradicted" verdicts is the second column; a claim
# without one says "not simulated yet".
#
# The third column is the **power**: the share of "reproduced" verdicts on panels drawn at the
# paper's effect as the paper states it (for a range, its lower end), at the simulated design;
# the "power panel" column says which effect and design. Most claims state no size ("correlate
# positively", "complementary"): there the effect is an assumption, labelled "assumed" in that
# column, and the power reads as "how strong a test at that effect", not as the paper's number.
# A test of low power says "inconclusive" even where the paper is right, so an "inconclusive"
# on the dashboard reads against it: the dashboard shows each claim's power, the verdict's own
# where it computes one (at the spread across models its panel shows; a verdict whose panel
# cannot reach p <= 0.05 at all has power 0 at any effect), else this appendix's, with its
# design and effect on hover.
#
# Each claim is simulated at a design, given in the "design" column. Where the chapter that
# judges the claim has run and glued its design, the design is **read from its results**
# (`lrd.book.executed_designs`: the models of each kind, their block counts, tasks, items, seeds
# and splits that `lrd_families`, `mid_layer`, `cosine_vs_ablation`, `selection_and_pruning` and
# `cayley_aggregation` ran, yours if you ran them on your panel); elsewhere it is the default
# panel's, restated in the claim's null model, as the column describes. The
# cosine claims are simulated with {glue:text}`null_calibration-sim_resamples` bootstrap
# resamples, fewer than the chapter draws (its `n_boot`): the resamples set how finely a p-value
# is resolved, not the noise the test must hold against, and the chapter's count would make this
# appendix the book's longest chapter. On an executed panel too small for a claim's test to
# reach p <= 0.05 in the paper's direction (the prune rules, the valley in every decoder), the
# verdict is never "reproduced" there: its false "reproduced" and its power are 0 by
# construction, and its false "contradicted" is what the row measures. Where no chapter ran,
# those claims' restated panels are the smallest that can decide, larger than the default book's.
# {glue:text}`null_calibration-n_executed` of {glue:text}`null_calibration-n_claims` claims are
# simulated at an executed chapter's design.
# Demonstrations (a construction or arithmetic that holds by design) have no null and are not
# listed. The per-model tests beside the verdicts ("shown in k of M") are exact sign-flip tests
# (the mid-layer claims), the per-model parts of the cosine verdicts simulated above, or
# simulated for their size in the unit tests (the aggregators, few-shot, the mapping, task
# dependence, complementarity with noisy curves and the prune rules: `tests/test_fusion_verdicts.py`, `tests/test_verdicts_families.py`,
# `tests/test_pruning.py`, at most 5% false positives per model at the chapters' designs).

# %% tags=["parameters"]
n_simulations = 900  # panels per claim and column: from 845 on, 0.05 + 2 standard errors is below 6.5%
n_power_simulations = 300  # panels of a power simulation of its own (no bound to meet: standard error at most 2.9 points)
seed = 0
workers = 0  # processes sharing the claims, 0 for one per core (the rates do not depend on it)
results_dir = "results"

# %% tags=["hide-input"]
import lrd
from lrd.book.glue import save_results
from lrd.verdicts.agreement import SIMULATED_RESAMPLES
from lrd.verdicts.calibration import calibration_table, monte_carlo_bound, simulations_needed

glue = lrd.book.open_chapter("null_calibration", globals())  # an appendix: it checks the verdicts, it judges no claim
designs = lrd.book.executed_designs(results_dir)  # the designs the executed chapters ran, where they glued them
table = calibration_table(n=n_simulations, seed=seed, k=2.0, workers=workers, designs=designs,
                          n_power=min(n_power_simulations, n_simulations))
glue("n_executed", len(designs))
glue("sim_resamples", SIMULATED_RESAMPLES)
glue("n_simulations", n_simulations)
glue("n_needed", simulations_needed())
glue("n_claims", len(table))
glue("bound", f"{monte_carlo_bound(n_simulations, k=2.0):.1%}")
glue("worst_rate", f"{table['rate reproduced'].max():.1%}")
glue("n_within", int((table["rate reproduced"] <= table["bound"]).sum()))
simulated = table["rate contradicted"].notna()
glue("n_effect", int(simulated.sum()))
glue("worst_against", f"{table.loc[simulated, 'rate contradicted'].max():.1%}" if simulated.any() else "n/a")
glue("n_within_against", int((table.loc[simulated, "rate contradicted"] <= table.loc[simulated, "bound"]).sum()))
powered = table["power"].notna()
glue("n_power", int(powered.sum()))
glue("n_power_simulations", int(table.loc[powered, "power simulations"].min()) if powered.any() else 0)
glue("power_se", f"{0.5 / max(int(table.loc[powered, 'power simulations'].min()), 1) ** 0.5:.1%}"
     if powered.any() else "n/a")
glue("power_range", f"{table.loc[powered, 'power'].min():.0%} to {table.loc[powered, 'power'].max():.0%}"
     if powered.any() else "n/a")

# %% [markdown]
# ## The calibration table
#
# For each of the {glue:text}`null_calibration-n_claims` claims judged by a test: the simulated
# panel, and the share of {glue:text}`null_calibration-n_simulations` null panels on which the
# verdict came out "reproduced", and of as many panels with the paper's effect at its edge on
# which it came out "contradicted". The bound is $0.05 + 2\sqrt{0.05 \cdot 0.95 / n}$
# ({glue:text}`null_calibration-bound`; below 6.5% from $n$ = {glue:text}`null_calibration-n_needed`
# on); {glue:text}`null_calibration-n_within` of {glue:text}`null_calibration-n_claims` claims stay
# within it for "reproduced", the largest rate is {glue:text}`null_calibration-worst_rate`; of the
# {glue:text}`null_calibration-n_effect` claims whose effect is simulated,
# {glue:text}`null_calibration-n_within_against` stay within it for "contradicted" (largest
# {glue:text}`null_calibration-worst_against`). For the {glue:text}`null_calibration-n_power`
# claims whose power is simulated, it ranges from {glue:text}`null_calibration-power_range`. A power
# needs no bound, only its precision: where the power's panels are not the effect's, it is read off
# the first {glue:text}`null_calibration-n_power_simulations` panels of its own simulation (column
# "power simulations"; standard error at most {glue:text}`null_calibration-power_se`).

# %% tags=["hide-input"]
table.assign(**{"rate reproduced": table["rate reproduced"].map("{:.1%}".format),
                "rate contradicted": table["rate contradicted"].map(lambda r: "not simulated" if r != r else f"{r:.1%}"),
                "power": table["power"].map(lambda r: "not simulated" if r != r else f"{r:.0%}"),
                "bound": table["bound"].map("{:.1%}".format),
                "MC standard error": table["MC standard error"].map("{:.1%}".format)}).set_index("claim")

# %% [markdown]
# ## Do the verdicts hold under the book's other choices?
#
# Calibration checks each test under the book's own reading of its claim. Many of the numbers a
# judge uses are the book's choices, not the paper's (a margin, a band, a size cut; each listed,
# with its reason, in {doc}`specifications`). Here every verdict of the executed chapters is
# judged again on the tables its chapter saved, once for each alternative value of each of the
# book's rules, the others kept. {glue:text}`null_calibration-n_robust` of the
# {glue:text}`null_calibration-n_sensitivity` verdicts keep their outcome under every alternative
# ({glue:text}`null_calibration-n_choices` alternatives in all); for the others, the table names
# the choices that change the outcome. A verdict that a choice of the book flips is not decided by
# the data alone.

# %% tags=["hide-input"]
robustness = lrd.book.sensitivity_table(results_dir)
glue("n_sensitivity", len(robustness))
glue("n_robust", int(robustness["robust"].sum()))
glue("n_choices", int(robustness["choices tried"].sum()))
robustness.assign(robust=robustness["robust"].map({True: "yes", False: "no"})).set_index("claim")

# %% tags=["hide-input"]
save_results(table, "null_calibration", results_dir)  # the dashboard shows each claim's simulated power from it
glue_path = glue.save(results_dir)
