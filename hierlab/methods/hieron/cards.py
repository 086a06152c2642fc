"""The method cards of seed 002: online Hieron, batch Hieron, Hieron on the flat taxonomy and the
greedy top-down comparison.

Each card is data: the idea in words, the objective in LaTeX with the seed's equation numbers,
the prediction rule, the solver, what the bound chart's curves mean and the citation. The
parameter rows are generated from the estimators' declarations
(:mod:`hierlab.methods.hieron.estimators`), and :func:`~hierlab.core.registry.register` names
each card after its registry entry.
"""

from __future__ import annotations

from hierlab.core.cards import MethodCard

__all__ = ["HIERON_BATCH_CARD", "HIERON_CARD", "HIERON_FLAT_CARD", "HIERON_GREEDY_CARD"]

_CITE_002 = (
    "O. Dekel, J. Keshet, Y. Singer. *Large Margin Hierarchical Classification.* ICML 2004 "
    "(seed 002)."
)
_HIERON_BOUNDS = (
    "No certificate: Hieron is an online algorithm, not a solver of a fixed objective. `upper` "
    r"is the normalised cumulative tree-induced error of the online predictions, "
    r"$\frac{1}{i}\sum_{j \le i} \gamma(y_j, \hat y_j)$ (Table 1 of seed 002), and `lower` is "
    r"empty. Thm. 1 bounds the cumulative squared loss by $\sum_v \|\omega^v\|^2 "
    r"\gamma_{\max} R^2$ when a margin-separating set of prototypes exists."
)


HIERON_CARD = MethodCard(
    display_name="Hieron (online)",
    paper_algorithm="Hieron, Algorithm 1 of seed 002, last hypothesis",
    title="Hieron (online)",
    idea=(
        "Each label has a prototype that is the sum of small vectors along its path from "
        "the root, so neighbouring labels have similar prototypes. After each mistake the "
        "algorithm moves the vectors of the two paths just enough (passive-aggressive) "
        "that the true label wins by a margin of sqrt(tree distance): far-away mistakes "
        "demand a bigger margin than near ones."
    ),
    objective=(
        r"\ell(\{w^v\}, x, y) = \Big[\sum_{v \in \mathcal P(\hat y)} w^v\cdot x - \sum_{v "
        r"\in \mathcal P(y)} w^v\cdot x + \sqrt{\gamma(y, \hat y)}\Big]_+ \ \text{(eq. 5)}"
        r"\\ w^v_{i+1} = w^v_i \pm \alpha_i x_i \ \ (v \in \mathcal P(y_i) \triangle "
        r"\mathcal P(\hat y_i)),\quad \alpha_i = \frac{\ell_i}{\gamma(y_i, \hat y_i)\,"
        r"\|x_i\|^2} \ \text{(eq. 7, 8)}"
    ),
    equations="seed 002, eq. (2)-(8), Algorithm 1; averaging eq. (13)",
    prediction=r"\hat y = \arg\max_{v \in \mathcal Y} \sum_{u \in \mathcal P(v)} w^u\cdot x"
    r" \quad \text{(eq. 3)}",
    symbols=r"$\mathcal P(v)$: the path from the root to $v$; $\gamma$: the tree distance "
    r"(the `hamming` loss of `hierlab.core.losses`, and $\sqrt\gamma$ its `sqrt_hamming`); "
    r"each update solves the projection problem of eq. (6).",
    solver="Online passive-aggressive updates (Algorithm 1), conservative: only rounds with "
    "a mistake change the prototypes (errata). It predicts with the last hypothesis, the "
    "one Algorithm 1 returns (average=True: the average of eq. 13). Primal form for the "
    "linear kernel, kernel form (eq. 11-12) otherwise.",
    bounds=_HIERON_BOUNDS,
    citation=_CITE_002,
    presets=(
        "`paper` is Algorithm 1 as printed: one pass, updates on the prediction's "
        "mistakes, and the last hypothesis predicts; it is also the default. average=True "
        "predicts with the averaged hypothesis of eq. (13) instead ('Batch' in Table 2)."
    ),
)

HIERON_BATCH_CARD = MethodCard(
    display_name="Hieron (batch)",
    paper_algorithm="batch Hieron (seed 002, Section 4), averaged hypothesis (eq. 13)",
    title="Hieron (batch)",
    idea=(
        "Online Hieron turned into a batch learner: since the true label is known before "
        "updating, compete against the label with the largest loss (not the prediction), "
        "and predict with the average of all the hypotheses seen during the pass, which "
        "has a generalisation bound (Thm. 2)."
    ),
    objective=(
        r"\hat y_i = \arg\max_{r \in \mathcal Y} \Big[\sum_{v \in \mathcal P(r)} w_i^v\cdot "
        r"x_i - \sum_{v \in \mathcal P(y_i)} w_i^v\cdot x_i + \sqrt{\gamma(y_i, r)}\Big]_+ "
        r"\ \text{(max of eq. 5)},\qquad w^v = \frac{1}{m+1}\sum_{i=1}^{m+1} w_i^v "
        r"\ \text{(eq. 13)}"
    ),
    equations="seed 002, Section 4, eq. (5), (13)/(15), Theorem 2",
    prediction=r"\hat y = \arg\max_{v} \sum_{u \in \mathcal P(v)} w^u\cdot x \quad "
    r"\text{(eq. 3 with the averaged } w^u)",
    symbols=r"$m$: the number of training rounds.",
    solver="One (or more) passes of the max-loss passive-aggressive update; the running "
    "average is kept incrementally.",
    bounds=_HIERON_BOUNDS,
    citation=_CITE_002,
    presets=(
        "`paper` is Section 4's batch Hieron: one pass of max-loss updates and the "
        "averaged hypothesis (eq. 13, fixed by this entry); it is also the default."
    ),
)

HIERON_FLAT_CARD = MethodCard(
    display_name="Hieron on the flat taxonomy ('flat')",
    paper_algorithm=(
        "batch Hieron (seed 002, Section 4), averaged hypothesis (eq. 13), flat taxonomy"
    ),
    title="Hieron on the flat taxonomy ('flat')",
    idea=(
        "The control experiment of seed 002: exactly batch Hieron, but with every label "
        "hung directly under the root, so prototypes share nothing and every mistake "
        "costs the same margin. Compare it with hieron-batch to see what the hierarchy "
        "buys (fewer far-away mistakes in the gamma histogram)."
    ),
    objective=(
        r"\ell = \big[w^{\hat y}\cdot x - w^{y}\cdot x + \sqrt{\gamma_{\text{flat}}(y, "
        r"\hat y)}\big]_+,\quad \gamma_{\text{flat}}(y, \hat y) = 2\cdot\mathbb 1[y \ne "
        r"\hat y] \quad \text{(eq. 5 on the flat tree)}"
    ),
    equations="seed 002, Section 5 ('flat'), eq. (5), (13)",
    prediction=r"\hat y = \arg\max_{v} w^v\cdot x",
    symbols="Errors are still measured with the real taxonomy's tree distance.",
    solver="Batch Hieron (max-loss updates, averaged hypothesis) on the flattened taxonomy.",
    bounds=_HIERON_BOUNDS,
    citation=_CITE_002,
    presets=(
        "`paper` is Section 5's 'flat' comparison: batch Hieron, one pass, on the "
        "flattened tree; it is also the default."
    ),
)

HIERON_GREEDY_CARD = MethodCard(
    display_name="Greedy top-down Hieron",
    paper_algorithm=(
        "greedy: an independent batch Hieron (seed 002, Section 4) at each internal vertex, "
        "averaged hypothesis (eq. 13)"
    ),
    title="Greedy top-down Hieron",
    idea=(
        "The other comparison of seed 002: an independent flat Hieron at every internal "
        "vertex choosing among its children, applied from the root down to a leaf. Each "
        "local decision is easy, but early mistakes are final."
    ),
    objective=(
        r"\forall p \notin \mathcal L:\ \ell_p = \big[w_p^{\hat c}\cdot x - w_p^{c}\cdot x"
        r" + \sqrt{2}\,\mathbb 1[c \ne \hat c]\big]_+ ,\quad c, \hat c \in \mathcal C(p)"
    ),
    equations="seed 002, Section 5 ('greedy'); eq. (5) per vertex",
    prediction=r"v \leftarrow 0;\ \text{while } \mathcal C(v) \ne \emptyset:\ v \leftarrow"
    r" \arg\max_{c \in \mathcal C(v)} w_v^{c}\cdot x",
    symbols=r"$w_p^c$: the prototype of child $c$ in the local problem at $p$.",
    solver="One flat Hieron per internal vertex, trained on the examples routed through it.",
    bounds="No certificate: `upper` is the online mistake rate of the local learners; "
    "`lower` is empty.",
    citation=_CITE_002,
    presets=(
        "`paper` is Section 5's 'greedy' comparison: one batch Hieron per internal "
        "vertex, one pass; it is also the default."
    ),
)
