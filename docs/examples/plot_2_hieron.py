"""
Hieron: are the mistakes nearer with the tree? (seed 002)
=========================================================

Hieron (seed 002) scores a label by the sum of the prototypes on its path,
:math:`\\sum_{v \\in P(y)} W^v \\cdot x`, and updates them with a margin that grows with the
tree distance :math:`\\gamma(y, \\hat y)` between the true and the predicted label (eq. (2),
Algorithm 1). On the flattened taxonomy the same algorithm is a multiclass perceptron. This is
the app's guided demo *Does the hierarchy help?*: the same preset, run here.
"""

# %%
from hierlab.lab.demos import DEMOS, run_demo

print(DEMOS["hierarchy-helps"].question)
res = run_demo("hierarchy-helps")
for text in res.observations:
    print("-", text)
res.metrics[["label", "zero_one_error", "tree_induced_error"]].round(4)

# %%
# The histogram of :math:`\gamma`: tree minus flat (Fig. 2 of seed 002). Below zero at large
# :math:`\gamma` means fewer far mistakes with the hierarchy.
res.figures["gamma difference (tree - flat)"]

# %%
res.figures["error per level"]
