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
# # Bring your own data
#
# Everything in the other notebooks works on your files. This notebook reads a data file and a
# taxonomy, checks them, fits a method while watching it, compares methods on identical splits,
# turns scores into calibrated probabilities, and saves the model.
#
# **Formats** (the whole list is in `datasets/README.md` and the user guide):
#
# * data: CSV with a label column (node names or `a/b/c` paths, `;` for several labels),
#   svmlight, Clus HMC ARFF (trees and DAGs), text CSV (TF-IDF);
# * taxonomies: an edge list (`parent child` per line), `a/b/c` paths, CSV or JSON.
#
# Replace the two paths below by yours.

# %%
from pathlib import Path

from IPython.display import display

import hierlab
from hierlab.notebook import LiveBounds

HERE = Path.cwd()
ROOT = next(p for p in (HERE, *HERE.parents) if (p / "datasets" / "example_text.csv").exists())
DATA = ROOT / "datasets" / "example_text.csv"
TAXONOMY = ROOT / "datasets" / "taxonomy_edges.txt"

tax = hierlab.read_taxonomy(TAXONOMY)
data = hierlab.load_dataset(DATA, taxonomy=tax)
print(tax.n_nodes, "nodes,", len(tax.leaves), "leaves, depth", tax.max_depth)
print(data.X.shape[0], "rows,", data.X.shape[1], "features,", type(data.X).__name__)
hierlab.plots.taxonomy_figure(tax, title="your taxonomy").show()

# %% [markdown]
# A malformed file raises `hierlab.DataError` (or `TaxonomyError`) naming the file, the line
# and the column or node: fix the line it names. A label that is not a node of the taxonomy is
# such an error.

# %%
try:
    hierlab.parse_taxonomy_text("root animal\nanimal cat\ncat root\n")
except hierlab.TaxonomyError as exc:
    print("refused:", exc)

# %% [markdown]
# ## Fit, watched live
#
# The default method for a first look is the top-down SVM (one `LinearSVC` per parent); the
# certified ones draw their bounds. `C` is scikit-learn's everywhere.

# %%
from sklearn.model_selection import train_test_split  # noqa: E402

rows = list(range(data.X.shape[0]))
tr, te = train_test_split(rows, test_size=0.3, random_state=0)
train, test = data.subset(tr), data.subset(te)
est = hierlab.FlatMulticlassClassifier(taxonomy=tax)
est.fit(train.X, train.y, callbacks=[LiveBounds(title="FLATMULT")])
print(hierlab.metrics.evaluate(test.y, est.predict(test.X), tax))

# %% [markdown]
# ## Compare methods on identical splits

# %%
cmp = hierlab.compare(data, ["topdown", "flatmult", "hr-svm"], n_splits=3, random_state=0)
display(cmp.table(["accuracy", "hierarchical_f1"]))

# %% [markdown]
# ## Probabilities, and stopping above the leaves when unsure

# %%
P = est.node_proba(test.X)
child = [i for i in range(tax.n_nodes) if tax.parent[i] >= 0]
print("P(child) <= P(parent) everywhere:", bool((P[:, child] <= P[:, tax.parent[child]]).all()))
print(est.predict(test.X[:5], threshold=0.7))

# %% [markdown]
# ## Save the model (no pickle: a zip of JSON and arrays, with checksums)

# %%
import tempfile  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "model.hlm"
    hierlab.save(est, path)
    again = hierlab.load(path)
    print((again.predict(test.X) == est.predict(test.X)).all())

# %% [markdown]
# ## Exercises
#
# 1. Read the same data from `datasets/example.svmlight` and `datasets/example_paths.csv`: do
#    the two give the same taxonomy?
# 2. Choose `C` with `hierlab.tune(est, train.X, train.y)`: does it beat `C = 1` on the test
#    rows?
# 3. Your taxonomy has a node with one child? Read the warning `Taxonomy` gives and decide
#    whether to merge them.
