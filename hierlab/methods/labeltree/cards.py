"""The method cards of seed 004's label-tree baselines (:mod:`hierlab.core.cards`).

Data only: each card is passed to :func:`~hierlab.core.registry.register` by its method's
module; the parameter rows are generated from the class's ``_parameters``.
"""

from __future__ import annotations

from hierlab.core.cards import ONE_SHOT_BOUNDS, MethodCard

__all__ = ["DAGSVM_CARD", "DRHL_CARD", "RDM_CARD", "RNMF_CARD"]

#: where these baselines are compared
_IN_004 = (
    "a baseline of Table 2 of seed 004 (*MF-Tree: Matrix Factorization Tree for Large "
    "Multi-Class Learning*)"
)

DAGSVM_CARD = MethodCard(
    display_name="DAGSVM",
    paper_algorithm=(
        "DAGSVM (Platt et al. 2000): K(K-1)/2 one-vs-one linear SVMs (hinge, regularised bias; "
        "dual CD of Hsieh et al. 2008) in a decision DAG, K - 1 evaluations per example"
    ),
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
        "DAG step at which each class was ruled out (the survivor: K). Measured on IPC "
        "titles (645 classes, 52,530 training rows, 25,479 features): 206,403 pairs, 78.2 "
        "million non-zero weights = 598 MB, fit 65 s CPU (10.2 passes per pair on average, "
        "33 at most, tol 0.1), peak memory 1.7 GB; predict 14.7 s CPU for 22,513 rows "
        "(642 SVMs each); macro-F1 0.311, accuracy 0.447. Feasible at this size; the weights "
        "grow with the pairs, so at 2,000 such classes expect about ten times that."
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

_TREE_SOLVER = (
    " Routers: LinearSVC (C) on the rows that reached the node, one weight row per child; "
    "leaves with several classes: one linear one-class SVM per class (libsvm, nu), the "
    "highest decision value wins. The app's class scores: 2 for the prediction, 1 + rank / m "
    "for the other m classes of the reached leaf, 0 elsewhere. The induced class hierarchy "
    "is induced_taxonomy_ (each class below every leaf that holds it: a DAG when a class "
    "sits in several leaves); the prediction stays flat over taxonomy_'s training labels."
)

RDM_CARD = MethodCard(
    display_name="RDM",
    paper_algorithm=(
        "RDM: recursive CLUHSIC (Song et al. 2007, linear kernel) into p = 2 clusters per node, "
        "LinearSVC routers, linear one-class SVMs at the leaves"
    ),
    title="RDM — recursive HSIC clustering of the examples",
    idea=(
        "Cluster the training examples (not the classes) into p groups that maximise the HSIC "
        "dependence between the features and the cluster labels, train a linear router to "
        "send examples to their group, and recurse until at most one class has more than a "
        "handful of examples; one-class SVMs decide among the classes left at a leaf. A class "
        "can end up in several leaves."
    ),
    objective=(
        r"\max_{\Pi}\ \mathrm{HSIC} = \frac{\mathrm{tr}[H K H \Pi \Pi^\top]}{(m-1)^2} = "
        r"\frac{1}{(m-1)^2}\sum_{k=1}^{p} \Big\|\sum_{i \in k} (x_i - \mu)\Big\|^2,\quad "
        r"K = XX^\top"
    ),
    equations="Song, Smola, Gretton & Borgwardt (2007), CLUHSIC (Algorithm 1) with A = I; "
    "HSIC as in eq. (2) of seed 004",
    prediction=r"v \leftarrow \arg\max_{c \in \mathrm{ch}(v)} w_c^\top x + b_c \text{ to a "
    r"leaf};\ \hat y = \arg\max_{k \in \mathrm{leaf}} (w_k^\top x - \rho_k)",
    symbols="p clusters per node, m rows at the node, mu their mean, Pi the 0/1 assignment.",
    solver=(
        "CLUHSIC's greedy moves: each row goes to the cluster of largest gain "
        "2 xbar_i (S_b - S_a) + 2 ||xbar_i||^2 until a sweep moves nothing (a local maximum, "
        "checked against enumeration on small cases); clusters' sums kept raw so a move "
        "costs O(nnz(x)); compiled with numba when installed; random initial assignment "
        "(seeded). A node is a leaf when at most one class has more than min_class_size = 5 "
        "rows (seed 004) or at max_depth." + _TREE_SOLVER
    ),
    bounds=ONE_SHOT_BOUNDS,
    citation=(
        "L. Song, A. Smola, A. Gretton, K. Borgwardt. *A dependence maximization view of "
        "clustering.* ICML 2007; made recursive with SVM routers and one-class SVM leaves as "
        + _IN_004
        + " describes it."
    ),
    presets=(
        "Seed 004 varies p in {2, 3, 4, 5} and stops at 5 rows per class; both presets: p = 2, "
        "min_class_size = 5, C = 1, nu = 0.5. What differs from the seed: the kernel is linear "
        "(no n x n matrix), the router is a LinearSVC (the seed: 'a binary classifier')."
    ),
)

RNMF_CARD = MethodCard(
    display_name="RNMF",
    paper_algorithm=(
        "RNMF (Liu et al. 2012): rank-2 NMF of the class means per node, LinearSVC routers, "
        "linear one-class SVMs at the leaves"
    ),
    title="RNMF — recursive NMF label tree",
    idea=(
        "Factorise the non-negative matrix of the classes' mean examples into p parts, send "
        "each class to its dominant part, train a linear router for that split and recurse "
        "until a node holds at most p classes; one-class SVMs decide among the classes of a "
        "leaf, so the tree is shallow but each leaf costs a few models."
    ),
    objective=(
        r"\min_{U \ge 0,\ V \ge 0}\ \|M - UV\|_F^2,\quad M_{k\cdot} = \text{mean row of class }"
        r" k,\quad \text{class } k \to \text{child } \arg\max_j U_{kj}"
    ),
    equations="Liu, Comar, Saha, Tan & Nucci (ICPR 2012), as described in seed 004 "
    "(Sections 2 and 6.2.2)",
    prediction=r"v \leftarrow \arg\max_{c \in \mathrm{ch}(v)} w_c^\top x + b_c \text{ to a "
    r"leaf};\ \hat y = \arg\max_{k \in \mathrm{leaf}} (w_k^\top x - \rho_k)",
    symbols="p: branching factor (the NMF rank); M: the node's class means (|S| x d), "
    "shifted column-wise to be non-negative when features are negative.",
    solver=(
        "scikit-learn's NMF per node (coordinate descent, NNDSVDa start, max_iter) of the "
        "class means scaled to unit length (grouped by direction, not size: IPC titles, "
        "70 classes, depth 23 -> 10); if all "
        "classes fall in one part, the halves of their share U_k0 / sum_j U_kj. A node with "
        "at most p classes is a leaf." + _TREE_SOLVER
    ),
    bounds=ONE_SHOT_BOUNDS,
    citation=(
        "L. Liu, P. M. Comar, S. Saha, P.-N. Tan, A. Nucci. *Recursive NMF: efficient label "
        "tree learning for large multi-class problems.* ICPR 2012; " + _IN_004 + "."
    ),
    presets=(
        "Seed 004 varies p in {2, 3, 4, 5}; both presets p = 2 (the binary tree). What differs "
        "from the paper: its text was not available here, so the split (argmax of the NMF "
        "factor of the class means, hard: a class in one child) and the leaf rule (at most p "
        "classes) follow seed 004's description of it; the soft partition the seed attributes "
        "to [22] is not implemented."
    ),
)

DRHL_CARD = MethodCard(
    display_name="DRHL",
    paper_algorithm=(
        "DRHL (Gao & Koller 2011): relaxed colourings (rho = 0.6) by exact DP alternating with a "
        "LinearSVC per node; ignored classes go to both children"
    ),
    title="DRHL — discriminative relaxed hierarchy (Gao & Koller)",
    idea=(
        "At each node, colour the classes positive, negative or ignored while training the "
        "binary SVM that separates the coloured ones: a class the SVM cannot place cheaply is "
        "ignored and passed to both children instead of being forced to one side. Recursing "
        "until single classes gives a deep tree (or DAG) in which a class can sit in several "
        "leaves."
    ),
    objective=(
        r"\min_{w,b,\mu}\ \tfrac12\|w\|^2 + C\sum_i |\mu_{y_i}|\,\xi_i - A\sum_i |\mu_{y_i}|"
        r",\quad \mu_{y_i}(w^\top x_i + b) \ge 1 - \xi_i,\ \ \xi_i \ge 0,\ \ "
        r"\Big|\sum_k \mu_k\Big| \le B,\ \ \mu_k \in \{-1, 0, 1\}"
    ),
    equations="Gao & Koller (2011), Section 3.2 and its supplementary eq. (1)-(2), rho = A / C",
    prediction=r"v \leftarrow \text{right if } w_v^\top x + b_v > 0 \text{ else left, to a "
    r"single-class leaf}",
    symbols="mu_k: the colour of class k at the node; S+, S-, S0 its coloured and ignored "
    "classes; the children hold S+ u S0 and S- u S0.",
    solver=(
        "Alternation: LinearSVC (hinge, C) on the coloured classes' rows, then the exact "
        "colouring for that SVM by dynamic programming on (sum of colours, a +1 seen, a -1 "
        "seen) -- O(K^2) time and int8 memory at a node of K classes (0.8 MB at 645) -- "
        "checked against enumeration of all 3^K colourings; until the colouring repeats or "
        "max_iter. Nodes with the same class set are shared (a DAG). Depth: the longest "
        "path; a row pays one dot product per level."
    ),
    bounds=ONE_SHOT_BOUNDS,
    citation=(
        "T. Gao, D. Koller. *Discriminative learning of relaxed hierarchy for large-scale "
        "visual recognition.* ICCV 2011; " + _IN_004 + " (cited there as [11])."
    ),
    presets=(
        "Seed 004 sets rho in {0.5, 0.6, 0.7, 0.8}; both presets rho = 0.6, C = 1, "
        "balance 0.5 (B is not given in seed 004). What differs from the paper: the start "
        "colouring (the principal direction of the class means) and the linear SVMs on "
        "the data's own features."
    ),
)
