"""
Comparing methods on identical splits
=====================================

:func:`hierlab.compare` fits every method on the same splits (here three random 70/30 splits of
one data set), collects every metric, and tests each method against a baseline with paired
tests over the splits. ``hierlab compare`` and the app's Compare page run the same code.
"""

# %%
import hierlab

data, _ = hierlab.make_hieron_synthetic(
    n_train_per_label=8, n_test_per_label=1, depth=3, noise_std=0.4, random_state=0
)
cmp = hierlab.compare(data, ["topdown", "flatmult", "hieron-batch"], n_splits=3, random_state=0)
cmp.table(["accuracy", "tree_induced_error", "hierarchical_f1"])

# %%
cmp.tests(baseline="topdown", metric="accuracy")

# %%
hierlab.plots.metric_bars_figure(
    cmp.results,
    metrics=["accuracy", "hierarchical_f1"],
    title="mean over 3 splits, with the standard deviation",
)
