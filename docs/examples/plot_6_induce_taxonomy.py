"""
Inducing a taxonomy from labelled data
======================================

Without a taxonomy, :func:`hierlab.induce_taxonomy` builds one over the classes from the data
alone: MF-Tree's HSIC splits (seed 004) or CMTL's confusion-based label tree (Bengio et al.
2010). On a generator with a known tree we can score the induced one with seed 004's
tree-similarity MSE (:math:`A_{ij} = 1 / \\text{hops}(i, j)`; 0 is identical), against random
binary trees over the same classes.
"""

# %%
import numpy as np
import pandas as pd

import hierlab
from hierlab.evaluation.metrics import tree_similarity_mse
from hierlab.lab.demos import random_binary_tree

train, test = hierlab.make_hierarchical_text(
    n_samples=1200, n_classes=12, n_features=500, depth=2, noise=0.8, random_state=1
)
truth = train.taxonomy
classes = [str(truth.names[i]) for i in truth.leaves]
mf = hierlab.induce_taxonomy(train.X, train.y, method="mftree", random_state=0)
cmtl = hierlab.induce_taxonomy(train.X, train.y, method="cmtl", random_state=0)
rng = np.random.default_rng(0)
chance = [tree_similarity_mse(truth, random_binary_tree(classes, rng), classes) for _ in range(20)]
pd.DataFrame(
    {
        "tree": ["MF-Tree", "CMTL", "random binary (mean of 20)"],
        "tree-similarity MSE": [
            tree_similarity_mse(truth, mf, classes),
            tree_similarity_mse(truth, cmtl, classes),
            float(np.mean(chance)),
        ],
    }
).round(4)

# %%
hierlab.plots.taxonomy_figure(truth, title="the hidden (true) tree")

# %%
hierlab.plots.taxonomy_figure(mf, title="the tree MF-Tree induced")
