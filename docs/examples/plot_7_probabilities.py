"""
Probabilities and thresholds: stopping above the leaves
=======================================================

Every hierlab estimator gives calibrated probabilities along the tree: ``node_proba(X)`` is
:math:`P(\\text{node on the label's path} \\mid x)`, with :math:`P(\\text{child}) \\le
P(\\text{parent})`. ``predict(X, threshold=t)`` then stops at the deepest node of the predicted
path whose probability reaches ``t``: a higher ``t`` gives shallower, more often correct
predictions. ``calibrate(X, y, cv=3)`` cross-fits the Platt maps on out-of-fold margins.
"""

# %%
import hierlab
from hierlab import curves

train, test = hierlab.make_hieron_synthetic(
    n_train_per_label=15, n_test_per_label=10, depth=3, noise_std=0.4, random_state=0
)
est = hierlab.TopDownClassifier(taxonomy=train.taxonomy).fit(train.X, train.y)
est.calibrate(train.X, train.y, method="sigmoid", cv=3)
P = est.node_proba(test.X)
print("P(root) =", P[:, 0].min(), "| rows:", P.shape[0], "| nodes:", P.shape[1])
curve = curves.threshold_curve(test.y, P, est.predict(test.X), train.taxonomy)
curve[["threshold", "mean_depth", "hierarchical_precision", "on_true_path"]].round(3)

# %%
# Precision against depth as the threshold moves: each point is one threshold.
hierlab.plots.threshold_figure(curve, title="top-down SVM: precision against depth")

# %%
# The reliability diagram: predicted probability against observed frequency, per bin.
hierlab.plots.reliability_figure(
    curves.reliability(test.y, P, train.taxonomy), title="calibration of node_proba"
)
