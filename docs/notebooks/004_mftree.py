# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Seed 004: MF-Tree, inducing a taxonomy by matrix factorisation
#
# *Learning a label tree by maximising the dependence between examples and splits (seed 004).*
#
# **The idea.** When no taxonomy is given, build one. MF-Tree grows a binary tree over the
# classes top-down: at each node it splits the classes in two so that the split depends as much
# as possible on the examples, measured by the Hilbert-Schmidt independence criterion (HSIC).
# The split is found by a matrix factorisation (the top eigenvectors of a class-level matrix
# $D$, Algorithm 1), and an example is routed down the tree to a leaf (Algorithm 2). `tau`
# bounds the depth of the exact search (Table 3: larger `tau`, slower and more accurate).
#
# **The objective** at one node (seed 004, eq. (3)-(5)): with the kernel matrix $K$ of the
# examples, the centring matrix $H$ and the class-to-side assignment $G$,
#
# $$\max_G \; \operatorname{HSIC} = \frac{1}{(n-1)^2} \operatorname{tr}\big(K H Y G G^\top
#   Y^\top H\big)$$
#
# over assignments $G$ of the classes to the two sides; relaxing $G$ gives an eigenproblem.

# %%
import os

from IPython.display import Markdown, display

import hierlab
from hierlab.core.cards import method_card
from hierlab.lab.demos import DEMOS, run_demo
from hierlab.lab.tables import run_reproduction
from hierlab.notebook import LiveBounds, compare_presets

#: "classroom" runs the seed's table in about a minute; "tiny" in seconds (the test suite's)
SIZE = os.environ.get("HIERLAB_NOTEBOOK_SIZE", "classroom")
display(Markdown(method_card("mftree").markdown()))

# %% [markdown]
# ## A small fit, watched live
#
# MF-Tree has no iterative solver: it reports one state when the tree is built (the chart has
# one point, no bounds), and `LiveBounds` says so.

# %%
train, test = hierlab.make_hierarchical_text(
    n_samples=1200, n_classes=16, n_features=500, depth=2, random_state=0
)
est = hierlab.MFTreeClassifier(random_state=0)
est.fit(train.X, train.y, callbacks=[LiveBounds(title="MF-Tree")])
print(est.algorithm_)
hierlab.plots.taxonomy_figure(est.taxonomy_, title="the induced tree").show()

# %% [markdown]
# ## The paper's rules against the fast ones
#
# `preset="paper"` splits the classes by argmax of $G$ and routes by argmax, as printed;
# `preset="fast"` uses the sign of the first eigenvector for both.

# %%
table, _ = compare_presets("mftree", train, test, random_state=0)
display(table)

# %% [markdown]
# ## The guided demo (the same as the app's *Guided demos* page)

# %%
demo = DEMOS["induce-taxonomy"]
display(Markdown(demo.markdown()))
result = run_demo(demo.name)
display(Markdown(result.markdown()))
display(result.metrics)
for fig in result.figures.values():
    fig.show()

# %% [markdown]
# ## The seed's table at classroom size
#
# Table 3 of seed 004: approximate MF-Tree, `tau` against training time and macro-F1, on the
# IPC patent titles: `hierlab reproduce mftree-ipc --size classroom`.

# %%
repro = run_reproduction("mftree-ipc", size=SIZE, timing_repeats=1)
print(f"{repro.seconds:.0f} s")
for title, frame in repro.tables.items():
    display(Markdown(f"**{title}**"))
    display(frame)

# %% [markdown]
# ## Exercises

# %%
display(Markdown(demo.exercises_markdown()))

# %% [markdown]
# 4. `hierlab.induce_taxonomy(X, y, method="cmtl")` builds the confusion-based label tree of
#    Bengio et al.: on the IPC titles, which tree gives the higher macro-F1 when a top-down
#    classifier is trained on it?
