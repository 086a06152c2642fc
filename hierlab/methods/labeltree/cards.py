"""The method cards of seed 004's label-tree baselines (:mod:`hierlab.core.cards`).

Data only: each card is passed to :func:`~hierlab.core.registry.register` by its method's
module; the parameter rows are generated from the class's ``_parameters``.
"""

from __future__ import annotations

from hierlab.core.cards import ONE_SHOT_BOUNDS, MethodCard

__all__ = ["DAGSVM_CARD"]

#: where these baselines are compared
_IN_004 = (
    "a baseline of Table 2 of seed 004 (*MF-Tree: Matrix Factorization Tree for Large "
    "Multi-Class Learning*)"
)

DAGSVM_CARD = MethodCard(
    title="DAGSVM — one-vs-one SVMs in a decision DAG",
    idea=(
        "Train one linear SVM for every pair of classes. To classify, keep the classes in a "
        "list and let the SVM of the first against the last class remove the loser, until "
        "one class is left: K - 1 SVMs per example instead of all K(K-1)/2 of plain "
        "one-vs-one voting."
    ),
    objective=(
        r"\min_{w_{ij}, b_{ij}}\ \tfrac12\left(\|w_{ij}\|^2 + b_{ij}^2\right) + C \sum_{r:\, "
        r"y_r \in \{i, j\}} \max\left(0,\ 1 - s_r (w_{ij}^\top x_r + b_{ij})\right),\quad "
        r"s_r = +1 \text{ for } i,\ -1 \text{ for } j"
    ),
    equations="Platt, Cristianini & Shawe-Taylor (2000), Section 3 (the DDAG)",
    prediction=r"[lo, hi] \leftarrow [1, K];\ \text{while } lo < hi:\ "
    r"\text{if } w_{lo,hi}^\top x + b_{lo,hi} > 0\ \text{then } hi \leftarrow hi - 1 "
    r"\text{ else } lo \leftarrow lo + 1",
    symbols="The classes are the training labels in sorted order; the list of remaining "
    "classes is always a contiguous range [lo, hi].",
    solver=(
        "Each pair's SVM by dual coordinate descent (Hsieh et al. 2008), liblinear's "
        "L1-loss SVM with a regularised bias (LinearSVC(loss='hinge')): the same optimum, "
        "checked against LinearSVC in the tests. Compiled with numba when installed. Cost: "
        "training touches every row K - 1 times per pass; the weights keep only their "
        "non-zero entries (float32), at most (K - 1) x the summed vocabulary of the "
        "classes: quadratic in K only through the number of pairs. Test cost: K - 1 sparse "
        "dot products per row, each O(nnz(x) log nnz(w)). The app's class scores are the "
        "DAG step at which each class was ruled out (the survivor: K)."
    ),
    bounds=ONE_SHOT_BOUNDS,
    citation=(
        "J. C. Platt, N. Cristianini, J. Shawe-Taylor. *Large margin DAGs for multiclass "
        "classification.* NIPS 12 (2000); " + _IN_004 + "."
    ),
    presets=(
        "Platt et al. train SVMs with a kernel and C chosen per data set; here linear SVMs "
        "(text and image features as seed 004 uses them), C = 1, in both presets."
    ),
)
