"""The method cards of seed 004: MF-Tree and its CMTL baseline (:mod:`hierlab.core.cards`).

Data only: each card is passed to :func:`~hierlab.core.registry.register` in
:mod:`hierlab.methods.mftree.estimators`; the parameter rows of a card are generated from the
class's ``_parameters``.
"""

from __future__ import annotations

from hierlab.core.cards import ONE_SHOT_BOUNDS, MethodCard

__all__ = ["CITE_004", "CMTL_CARD", "MFTREE_CARD"]

#: the citation of seed 004
CITE_004 = (
    "*MF-Tree: Matrix Factorization Tree for Large Multi-Class Learning* (seed 004); HSIC of "
    "Gretton et al. (2005)."
)

MFTREE_CARD = MethodCard(
    display_name="MF-Tree",
    paper_algorithm=(
        "MF-Tree of seed 004: HSIC splits by the top eigenvectors of D, classes split by argmax_j"
        " G_kj as printed (Algorithm 1); routing by p = G^T Y^T k, argmax p (Algorithm 2)"
    ),
    title="MF-Tree — taxonomy induction by matrix factorisation",
    idea=(
        "When no hierarchy is given, build one: split the classes in two so that classes "
        "that look alike (in kernel space) stay together, which maximises the HSIC "
        "dependence between features and the tree; recurse until single classes remain. "
        "A test point walks down the induced binary tree, one cheap projection per level."
    ),
    objective=(
        r"J = \|X - ZW^\top\|_F^2 + \lambda\,\mathrm{tr}[WAW^\top] \ \text{(eq. 3)}"
        r"\ \Longleftrightarrow\ \max\ \mathrm{tr}[KL],\ L = YCY^\top \ \text{(eq. 5)}"
        r"\\ \text{per node: } \max_G\ \mathrm{tr}[G^\top D G]\ \text{s.t. } G^\top G = "
        r"I_2,\quad D = Y^\top K Y \quad \text{(eq. 12)}"
    ),
    equations="seed 004, eq. (3), (5), (12); Algorithms 1-3",
    prediction=r"\hat p = G^\top Y^\top \hat k = P^\top \hat k,\ \text{go to child } "
    r"\arg\max_j \hat p_j \quad \text{(Algorithm 2)}",
    symbols=r"$K$: the centred kernel of the rows at the node, $Y$ their class indicator, "
    r"$C$ the tree-structured covariance, $G$ the top two eigenvectors of $D$; with the "
    r"linear kernel $D = (Y^\top H X)(Y^\top H X)^\top$ (no $n \times n$ matrix).",
    solver="Recursive binary partition by the top two eigenvectors of D at each node "
    "(Algorithm 1; two non-empty children guaranteed): split_rule='sign' sends class k left iff "
    "g1_k >= 0, split_rule='argmax' uses the printed argmax_j G_kj with the sign of g2 that "
    "gives the larger HSIC; routing='sign' / 'argmax' descends by the sign of p_1 or by "
    "argmax p (Algorithm 2). Above depth tau, the class-size / mean-distance split of "
    "Algorithm 3. split_info_ reports the HSIC of every split (eq. 2, tr(D B) / (n - 1)^2).",
    bounds=ONE_SHOT_BOUNDS
    + " Judge the induced tree against a known one with the tree-similarity MSE "
    r"($A_{ij} = 1/\text{numhops}(c_i, c_j)$, `hierlab.evaluation.metrics.tree_similarity_mse`).",
    citation=CITE_004,
    presets=(
        "`paper` is the exact MF-Tree as printed (tau = 0: eigenvector splits at every "
        "depth, Algorithms 1-2; the split by argmax_j G_kj and routing by argmax p). `fast` "
        "keeps tau = 0 and splits and routes by the sign of the first component. Table 3 of "
        "seed 004 trades macro-F1 for time with tau = 2-3 (Algorithm 3)."
    ),
)

CMTL_CARD = MethodCard(
    display_name="CMTL label tree (Bengio et al.)",
    paper_algorithm=(
        "CMTL label tree (Bengio et al. 2010): spectral splits of held-out confusions (of a one-"
        "vs-rest SVM unless an estimator is given), one LinearSVC per internal node"
    ),
    title="CMTL label tree (Bengio et al.)",
    idea=(
        "The label-tree baseline of seed 004: train one-vs-rest classifiers on part of the "
        "data, measure which classes they confuse on the rest, and split the classes by "
        "spectral clustering of that confusion affinity, recursively; then train a binary "
        "classifier at each internal node and route top-down."
    ),
    objective=(
        r"A = \tfrac12(\bar C + \bar C^\top),\ \ \bar C_{ij} = \text{rate of class } i "
        r"\text{ predicted as } j\ \text{(held out)};\quad \text{split} = "
        r"\text{spectral bipartition of } A"
    ),
    equations="Bengio et al. (2010), Section 3; baseline of seed 004",
    prediction=r"v \leftarrow 0;\ \text{while } v \notin \mathcal L:\ v \leftarrow "
    r"\text{right child if } w_v^\top x + b_v > 0 \text{ else left child}",
    symbols="Each internal node has one LinearSVC trained on the full training set.",
    solver="The confusions' one-vs-rest classifier is LinearSVC's model (squared hinge, "
    "regularised bias, C) by hierlab's certified global dual CD (ovr-svm: every class in one "
    "pass over the examples); liblinear for the node classifiers; eigenvectors for the "
    "splits (Lanczos above 1,000 classes, on the sparse confusions plus the smoothing as a "
    "rank-one term: no classes x classes array). On sparse rows the node classifiers' "
    "weights are held sparse (a node weighs only its examples' features).",
    bounds=ONE_SHOT_BOUNDS,
    citation="S. Bengio, J. Weston, D. Grangier. *Label embedding trees for large "
    "multi-class tasks.* NIPS 2010; baseline of " + CITE_004,
    presets=("A baseline (Bengio et al. 2010): both presets are its defaults, C = 1."),
)
