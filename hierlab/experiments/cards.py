"""Method cards: what every registered method does, in words, in one objective, and in numbers.

A card is the teaching view of a method, built for the app's Methods and Train pages and for
notebooks. The parameter rows are *generated* from the registry (:mod:`hierlab.experiments.
registry`: type, default, range, log scale, choices and the schema's help line), so they never
go stale; the card adds what the schema cannot say:

* a short plain-language idea,
* the training objective in LaTeX (for ``st.latex`` / MathJax) with the seed's equation numbers,
* the prediction rule,
* a sentence per parameter on what it does and which values are sensible,
* the solver and what the two curves of the live bound chart (``upper`` / ``lower``) mean,
* the citation.

Every registered method must have a card: :func:`method_card` raises :class:`MissingCardError`
for one that has none, and ``tests/test_cards.py`` fails as soon as a new method is registered
without its card.

Examples
--------
>>> from hierlab.experiments.cards import method_card
>>> card = method_card("orthognl")
>>> card.equations
'seed 000, eq. (4)-(7); K by eq. (6); Algorithm 1'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from hierlab.exceptions import ParameterError
from hierlab.experiments.registry import MethodSpec, Param, get_method, list_methods

__all__ = [
    "CARDS",
    "MethodCard",
    "MissingCardError",
    "ParamDoc",
    "cards_markdown",
    "method_card",
    "missing_cards",
]


class MissingCardError(ParameterError):
    """A registered method has no :class:`MethodCard` (add one in ``experiments/cards.py``)."""


@dataclass(frozen=True)
class ParamDoc:
    """One parameter as a card shows it (registry schema + the card's note).

    Attributes
    ----------
    name, type : str
    default : Any
    range : str
        Human-readable allowed values (``"1e-4 … 1e5 (log scale)"``, ``"one of: a, b"``).
    help : str
        The registry's one-line help.
    note : str
        The card's explanation: what the parameter does and which values are sensible.
    """

    name: str
    type: str
    default: Any
    range: str
    help: str
    note: str

    @property
    def text(self) -> str:
        """``help`` and ``note`` joined into one description."""
        parts = [p.strip().rstrip(".") for p in (self.help, self.note) if p.strip()]
        return ". ".join(parts) + ("." if parts else "")


@dataclass(frozen=True)
class MethodCard:
    """The card of one registered method.

    Attributes
    ----------
    name : str
        Registry key.
    title : str
        Display name (``"ORTHOGNL"``).
    idea : str
        Two or three plain sentences: what the method does and why.
    objective : str
        The training problem in LaTeX (no surrounding ``$$``), for ``st.latex``.
    equations : str
        Where it is in the seed (``"seed 000, eq. (4)-(7)"``).
    prediction : str
        The prediction rule in LaTeX.
    solver : str
        The optimisation algorithm, in words.
    bounds : str
        What the ``upper`` and ``lower`` curves of the solver report mean for this method.
    citation : str
        The paper(s).
    notes : dict of str to str
        Extra explanation per parameter name (what it does, sensible range).
    symbols : str
        The notation of the objective, in words.
    """

    name: str
    title: str
    idea: str
    objective: str
    equations: str
    prediction: str
    solver: str
    bounds: str
    citation: str
    notes: dict[str, str] = field(default_factory=dict)
    symbols: str = ""

    @property
    def spec(self) -> MethodSpec:
        """The registry entry of this method."""
        return get_method(self.name)

    def objective_lines(self) -> list[str]:
        """The objective split at its top-level line breaks (``\\\\``), one ``st.latex`` each."""
        return _split_lines(self.objective)

    def parameters(self) -> list[ParamDoc]:
        """One :class:`ParamDoc` per parameter of the registry schema, in schema order."""
        return [
            ParamDoc(
                name=p.name,
                type=p.type,
                default=p.default,
                range=param_range(p),
                help=p.help,
                note=self.notes.get(p.name, ""),
            )
            for p in self.spec.params
        ]

    def markdown(self, heading: str = "###") -> str:
        """The card as Markdown (LaTeX in ``$$ ... $$`` blocks, parameters as a table)."""
        spec = self.spec
        tags = [f"seed {spec.seed}" if spec.seed != "baseline" else "baseline"]
        tags.append("certified lower bound" if spec.bounds else "no certificate")
        if spec.multilabel:
            tags.append("multi-label")
        if spec.dag:
            tags.append("DAG taxonomies")
        lines = [
            f"{heading} {self.title} (`{self.name}`)",
            "",
            f"*{' · '.join(tags)}* — {spec.summary}",
            "",
            self.idea,
            "",
            f"**Objective** ({self.equations}):",
            "",
        ]
        for line in self.objective_lines():
            lines += ["$$", line, "$$", ""]
        if self.symbols:
            lines += [self.symbols, ""]
        lines += ["**Prediction:**", "", "$$", self.prediction, "$$", ""]
        lines += [f"**Solver.** {self.solver}", "", f"**Bounds.** {self.bounds}", ""]
        params = self.parameters()
        if params:
            lines += ["| parameter | default | range | what it does |", "|---|---|---|---|"]
            for d in params:
                text = d.text.replace("|", "\\|")
                lines.append(f"| `{d.name}` | `{d.default!r}` | {d.range} | {text} |")
            lines.append("")
        fixed = spec.fixed
        if fixed:
            shown = ", ".join(f"`{k}={v!r}`" for k, v in fixed.items())
            lines += [f"Fixed by this registry entry: {shown}.", ""]
        lines += [f"**Citation.** {self.citation}", ""]
        return "\n".join(lines)


def _split_lines(tex: str) -> list[str]:
    """Split LaTeX at ``\\\\`` outside braces (KaTeX's ``st.latex`` shows one line per call)."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(tex):
        if tex[i] == "\\" and i + 1 < len(tex):
            if tex[i + 1] == "\\" and depth == 0:
                out.append(tex[start:i].strip())
                start = i + 2
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(tex[i], 0)
        i += 1
    out.append(tex[start:].strip())
    return [ln for ln in out if ln]


def _num(v: float) -> str:
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e6):
        return str(int(v))
    return f"{v:g}"


def param_range(p: Param) -> str:
    """Readable allowed values of a registry :class:`Param`."""
    if p.choices is not None:
        return "one of: " + ", ".join(str(c) for c in p.choices)
    if p.type == "bool":
        return "True / False"
    if p.type == "str":
        return "text"
    lo = _num(p.low) if p.low is not None else None
    hi = _num(p.high) if p.high is not None else None
    if lo is not None and hi is not None:
        out = f"{lo} … {hi}"
    elif lo is not None:
        out = f"≥ {lo}"
    elif hi is not None:
        out = f"≤ {hi}"
    else:
        out = "any"
    if p.log:
        out += " (log scale)"
    if p.default is None:
        out += "; None = automatic"
    return out


# ------------------------------------------------------------------------------------ texts
_CITE_000 = (
    "D. Zhou, L. Xiao, M. Wu. *Hierarchical Classification via Orthogonal Transfer.* ICML 2011 "
    "(seed 000)."
)
_CITE_001 = (
    "S. Gopal, Y. Yang, A. Niculescu-Mizil. *Regularization Framework for Large Scale "
    "Hierarchical Classification* (seed 001)."
)
_CITE_002 = (
    "O. Dekel, J. Keshet, Y. Singer. *Large Margin Hierarchical Classification.* ICML 2004 "
    "(seed 002)."
)
_CITE_003 = "*Normalized Hierarchical SVM* (seed 003)."
_CITE_004 = (
    "*MF-Tree: Matrix Factorization Tree for Large Multi-Class Learning* (seed 004); HSIC of "
    "Gretton et al. (2005)."
)

_RDA_SOLVER = (
    "Regularized dual averaging with optimality bounds (seed 000, Algorithm 1): one "
    "subgradient of the hinge part per iteration, averaged, then the closed-form step "
    r"$w(t+1) = \arg\min_w \bar g(t)^\top w + \Psi(w)$ (eq. 9/11)."
)
_RDA_BOUNDS = (
    "Certified. `upper` is the best objective value seen, "
    r"$\bar J(t+1) = \min\{\bar J(t), J(w(t+1))\}$ (step 3); `lower` is the dual-averaging "
    r"minorant $\delta(t) + \bar g(t)^\top w(t+1) + \Psi(w(t+1))$, maximised over $t$ "
    "(step 4 with the errata). The optimum $J^*$ always lies between them, so the gap "
    "`upper - lower` is a proof of how far the returned weights are from optimal; the solver "
    "stops when the gap is below `max(tol, rtol * upper)`."
)
_RDA_NOTES = {
    "C": "Larger C fits the training data harder; the paper uses C = 1 and saw little change "
    "for C in [1, 100]. Try 0.1 … 100.",
    "tol": "Stop as soon as the certified gap is this small (absolute). 1e-4 is tight; 1e-2 is "
    "enough for a classroom demo.",
    "rtol": "Relative version of tol: 1e-3 stops at a 0.1% certified gap.",
    "max_iter": "A budget: RDA converges like O(log t / t), so a few hundred iterations "
    "usually close most of the gap; raise it when the gap is still large.",
    "max_time": "Wall-clock budget of the solver in seconds (callbacks excluded).",
    "averaging": "'uniform' is the paper's 1/t weighting; 'linesearch' picks the weight that "
    "maximises the new lower bound, which usually closes the gap much faster.",
}

_HIERON_NOTES = {
    "update": "'prediction' is online Hieron (update only on mistakes of the current "
    "prediction, Alg. 1); 'max-loss' uses the label with the largest loss of eq. (5), the "
    "batch variant whose average has the generalisation bound of Thm. 2.",
    "average": "Predict with the average of all online hypotheses (eq. 13/15): much more "
    "stable than the last one on noisy data.",
    "epochs": "Passes over the data. The paper uses one; 2-5 help when the data is small.",
    "shuffle": "Shuffle the rows before each epoch (otherwise the given order).",
    "kernel": "'linear' works in the primal; 'rbf' and 'poly' use the kernel form of eq. (12) "
    "and cost O(n_support) per prediction.",
    "form": "'dual' with the linear kernel runs the kernel code path (same predictions).",
    "gamma": "Kernel scale; None uses 1 / n_features. Try 0.1x-10x that.",
    "degree": "Polynomial kernel degree (2-4 is usual).",
    "random_state": "Seed of the shuffles (only used with shuffle=True).",
    "allow_stop": "Let an internal vertex keep an example instead of always routing to a leaf "
    "(needed when labels can be internal vertices).",
}
_HIERON_BOUNDS = (
    "No certificate: Hieron is an online algorithm, not a solver of a fixed objective. `upper` "
    r"is the normalised cumulative tree-induced error of the online predictions, "
    r"$\frac{1}{i}\sum_{j \le i} \gamma(y_j, \hat y_j)$ (Table 1 of seed 002), and `lower` is "
    r"empty. Thm. 1 bounds the cumulative squared loss by $\sum_v \|\omega^v\|^2 "
    r"\gamma_{\max} R^2$ when a margin-separating set of prototypes exists."
)

_HR_NOTES = {
    "C": "Loss weight (eq. 2/3); the paper cross-validates C in 1e-3 … 1e3. Small C leans on "
    "the hierarchy (children pulled to their parents), large C on the data.",
    "max_iter": "Outer block-coordinate iterations (all even levels, then all odd levels); "
    "10-50 is usually enough for the certified gap to reach 1%.",
    "tol": "Stop when the certified relative duality gap (upper - lower) / upper is below "
    "this; 1e-2 is the default, 1e-3 for precise comparisons.",
    "inner_tol": "How accurately each leaf subproblem is solved at first; it is tightened "
    "automatically as the outer gap closes.",
    "max_inner_iter": "Passes (dual CD) or L-BFGS iterations per leaf and outer iteration.",
    "shrinking": "Hsieh et al.'s shrinking in the dual CD: faster on large sparse data.",
    "n_jobs": "Leaves of one parity are independent (Section 4.3): solve them in parallel.",
    "random_state": "Seed of the dual CD's random coordinate order.",
}
_HR_BOUNDS = (
    "Certified. `upper` is the smallest primal objective $J(W)$ seen; `lower` is the Lagrange "
    r"dual $D(\alpha) = \sum \phi(\alpha_{in}) - \frac12\sum_j\|S_j\|^2$ at the leaves' dual "
    "point (for HR-LR, the logistic loss's own dual point at $W$), which bounds the optimum "
    "from below for any feasible $\\alpha$ (derivation in `hierlab.solvers.block_cd`). The "
    "solver stops at relative gap `tol`."
)
_HR_OBJ_REG = r"\min_{W}\ \sum_{n \in \mathcal N} \tfrac12 \|w_n - w_{\pi(n)}\|^2"
_HR_SYMBOLS = (
    r"$\mathcal N$: the nodes, $\pi(n)$ the parent of $n$ ($w_{\pi(\mathrm{root})} = 0$), "
    r"$T$ the leaves, $y_{in} = +1$ iff leaf $n$ is a label of example $i$, else $-1$."
)

_OVR_NOTES = {
    "C": "Loss weight of each leaf's binary problem; the paper cross-validates 1e-3 … 1e3.",
    "tol": "liblinear's stopping tolerance.",
    "max_iter": "liblinear's iteration limit per leaf.",
    "n_jobs": "Leaves are independent: train them in parallel.",
}
_OVR_BOUNDS = (
    "No certificate: each leaf is one liblinear call, reported as a single state whose `upper` "
    "is the summed objective of the binary problems; `lower` is empty."
)

_SGD_NOTES = {
    "lam": "Weight of the squared norm against the mean loss. Select it on a hold-out set; "
    "the paper's grid 1e-8 … 1e2 (on the summed loss) is ours divided by N, so 1e-6 … 1e-2 "
    "is the useful range here.",
    "epochs": "Maximum passes of Pegasos; SGD stops earlier when an epoch improves the "
    "objective by less than its tolerance. 10-50.",
    "batch_size": "Rows per stochastic step: larger batches are smoother and vectorise better.",
    "loss": "The structural error Δ added inside the max (the margin required against each "
    "wrong label).",
    "label_space": "Multi-label only: 'leaves' = unions of root-to-leaf paths (Section 3), "
    "'closed' = any ancestor-closed set; 'auto' picks from the training labels.",
    "alpha_rule": "eq6: minimise sum alpha^rho (spreads weight over the path); eq7: maximise "
    "the smallest alpha with alpha growing towards the leaves (directional constraint).",
    "rho": "Exponent of eq. (6); 2 is the paper's QP, values near 1 approach the node-"
    "duplication invariance of Theorem 1.",
    "T": "DAGs only: path sums of alpha may range in [1, T] (eq. 8; the paper uses 1.5).",
    "rounds": "How many times alpha is re-optimised in closed form (Algorithm 1).",
    "epochs_per_alpha": "Pegasos epochs on V between two alpha updates.",
    "alpha_init": "Starting alpha: eq. (6) or eq. (7).",
    "solver": "pegasos: the paper's SGD, every label space. bcfw: block-coordinate "
    "Frank-Wolfe on the dual of the same objective (single label): a certified lower bound; "
    "its dual tables are dense, so it suits taxonomies of up to a few hundred nodes.",
    "tol": "Relative tolerance: SGD's per-epoch improvement, or BCFW's certified gap "
    "(1e-2 is a good start for bcfw).",
}
_SGD_SOLVER = (
    "Mini-batch Pegasos (Shalev-Shwartz et al. 2007), the solver seed 003 uses, with a bounded "
    "first step and polynomial-decay averaging; the most violating label is found by "
    "enumeration (single label), dynamic programming on trees or an LP/IP on DAGs (multi-label, "
    "Section 7.1). With `solver='bcfw'` (single label): block-coordinate Frank-Wolfe on the "
    "dual, one pass over the examples per iteration."
)
_SGD_BOUNDS = (
    "No certificate with the default solver (Pegasos): `upper` is the primal objective of the "
    "averaged iterate on the whole training set after each epoch (it should decrease and "
    "flatten), `lower` is empty. With `solver='bcfw'`: `upper` is the best primal objective, "
    "`lower` the dual value, a certified lower bound of the optimum; it stops when the gap "
    "is below `tol` times the objective."
)

_ONE_SHOT_BOUNDS = (
    "No iterative solver: one state is reported, with no objective (`upper` is NaN) and no "
    "lower bound."
)

_TREE_INDUCTION_NOTES = {
    "kernel": "'linear' never forms an n x n kernel: D = (Yᵀ H X)(Yᵀ H X)ᵀ. 'rbf' goes "
    "through an explicit random-feature map.",
    "gamma": "RBF width; None = 1 / n_features.",
    "tau": "Approximate MF-Tree (Algorithm 3): split by class size and mean distance above "
    "depth tau, by eigenvectors below. 0 is the exact MF-Tree; 2-3 saves most of the time on "
    "many classes at little cost (Table 3 of seed 004).",
    "random_state": "Seed of the random feature map (rbf only).",
}

# ------------------------------------------------------------------------------------ cards
_SIBLING_HINGE = (
    r"\frac{C}{N}\sum_{k=1}^{N} \max\Big\{0,\ \max_{i \in \mathcal A^+(y_k),\ "
    r"j \in \mathcal S(i)} 1 - w_i^\top x_k + w_j^\top x_k\Big\}"
)
_RECURSIVE_PRED = (
    r"f(x):\ i \leftarrow 0;\ \text{while } \mathcal C(i) \neq \emptyset:\ "
    r"i \leftarrow \arg\max_{j \in \mathcal C(i)} w_j^\top x \quad \text{(eq. 1)}"
)
_TREE_SYMBOLS = (
    r"$\mathcal A^+(i)$: node $i$ and its ancestors (root excluded), $\mathcal S(i)$ its "
    r"siblings, $\mathcal C(i)$ its children, $\mathcal D^+(i)$ its subtree, $N$ the number of "
    "training examples."
)

_LIST: list[MethodCard] = [
    MethodCard(
        name="orthognl",
        title="ORTHOGNL — hierarchical SVM with orthogonal transfer",
        idea=(
            "One classifier per node, applied top-down. Instead of asking a child's classifier "
            "to resemble its parent's, ORTHOGNL asks it to be *different*: the penalty "
            r"$|w_i^\top w_j|$ pushes each node's weight vector towards orthogonality with its "
            "ancestors', so that a node looks at the features that separate its own children "
            "(e.g. 'parsing' under computer science) rather than re-using its parent's "
            "('computer'). Training is convex as long as the comparison matrix of K is positive "
            "definite, which limits alpha."
        ),
        objective=(
            r"\min_{w}\ J(w) = \underbrace{\frac12 \sum_{i,j=1}^{m} K_{ij}\,|w_i^\top w_j|}"
            r"_{\Omega(w),\ \text{eq. (5)}} + \underbrace{" + _SIBLING_HINGE + r"}_{H(w)}"
            r" \quad \text{(eq. 4, 7)}"
            r"\\ K_{ii} = |\mathcal D^+(i)|,\quad K_{ij} = \alpha \ \text{if } i \in "
            r"\mathcal A(j) \text{ or } j \in \mathcal A(i),\quad 0 \text{ else} "
            r"\quad \text{(eq. 6)}"
        ),
        equations="seed 000, eq. (4)-(7); K by eq. (6); Algorithm 1",
        prediction=_RECURSIVE_PRED,
        symbols=_TREE_SYMBOLS
        + r" Convex iff $K \ge 0$ and its comparison matrix $\bar K$ ($|K_{ii}|$ on the "
        r"diagonal, $-|K_{ij}|$ off it) is PSD (Thm. 1); strongly convex with modulus "
        r"$\lambda_{\min}(\bar K)$ when it is PD (Cor. 2).",
        solver=_RDA_SOLVER
        + r" Splitting of Section 4.3: $\Psi(w) = \frac{\lambda_{\min}}{2}\|w\|^2$, "
        r"$\phi = \Omega - \Psi + H$, so the step is $w(t+1) = -\bar g(t)/\lambda_{\min}$; the "
        r"subgradient of $\Omega$ is Theorem 4's $K_{ii}w_i + \sum_{j\ne i} "
        r"\mathrm{sign}(w_i^\top w_j) K_{ij} w_j$.",
        bounds=_RDA_BOUNDS,
        citation=_CITE_000,
        notes={
            **_RDA_NOTES,
            "alpha": "Strength of the orthogonality penalty between a node and each ancestor "
            "(eq. 6). It must stay strictly below the taxonomy's largest admissible alpha "
            "(`hierlab.regularizers.max_admissible_alpha`), else the objective is not convex "
            "and fitting raises an error naming that limit. alpha = 0 is a recursive SVM with "
            "a per-node L2 penalty weighted by subtree size; the paper uses alpha = 1 on small "
            "trees. The closer to the limit, the smaller lambda_min and the slower RDA.",
            "split": "'lambda_min' is the paper's Psi = lambda_min/2 ||w||^2; 'jacobi' scales "
            "Psi per node by K_ii (still a valid split), which takes larger steps on the "
            "heavily regularised upper nodes and often converges faster.",
        },
    ),
    MethodCard(
        name="flatmult",
        title="FLATMULT — flat multiclass SVM (Crammer & Singer)",
        idea=(
            "Ignore the hierarchy: one weight vector per leaf and the multiclass hinge of "
            "Crammer & Singer, which asks the true leaf to beat every other leaf by a margin "
            "of 1. The baseline every hierarchical method must beat."
        ),
        objective=(
            r"\min_{w}\ \frac12 \sum_{i \in \mathcal L} \|w_i\|^2 + \frac{C}{N}\sum_{k=1}^{N}"
            r" \max\Big\{0,\ \max_{i \in \mathcal L \setminus \{y_k\}} 1 - w_{y_k}^\top x_k + "
            r"w_i^\top x_k\Big\} \quad \text{(eq. 12)}"
        ),
        equations="seed 000, eq. (12) (Section 5); Algorithm 1",
        prediction=r"f(x) = \arg\max_{i \in \mathcal L} w_i^\top x \quad \text{(eq. 2)}",
        symbols=r"$\mathcal L$: the leaves (internal training labels join the candidates).",
        solver=_RDA_SOLVER + r" Here $\Psi = \frac12\|w\|^2$, so $w(t+1) = -\bar g(t)$.",
        bounds=_RDA_BOUNDS,
        citation="K. Crammer, Y. Singer. *On the algorithmic implementation of multiclass "
        "kernel-based vector machines.* JMLR 2001; as the FLATMULT baseline of " + _CITE_000,
        notes=dict(_RDA_NOTES),
    ),
    MethodCard(
        name="hiermult",
        title="HIERMULT — one multiclass SVM per internal node",
        idea=(
            "Decompose the tree: at every internal node train an independent Crammer-Singer "
            "SVM that chooses among that node's children, using only the examples below it; "
            "predict by walking down from the root. Cheap and often strong, but an error at the "
            "top cannot be undone below."
        ),
        objective=(
            r"\forall p \notin \mathcal L:\ \min_{w}\ \frac12\sum_{i \in \mathcal C(p)} "
            r"\|w_i\|^2 + \frac{C}{N_p}\sum_{k:\, y_k \in \mathcal D(p)} \max\Big\{0,\ "
            r"\max_{i \in \mathcal C(p),\, i \ne c_k} 1 - w_{c_k}^\top x_k + w_i^\top x_k\Big\}"
        ),
        equations="seed 000, Section 5 (eq. 12 with Y replaced by C(p)); Algorithm 1",
        prediction=_RECURSIVE_PRED,
        symbols=r"$c_k$: the child of $p$ on the path to $y_k$; $N_p$: the examples below $p$.",
        solver=_RDA_SOLVER + " The per-node problems are independent and solved together as one "
        "block-separable objective.",
        bounds=_RDA_BOUNDS + " The reported bounds are the sums over the node problems.",
        citation="S. Dumais, H. Chen. *Hierarchical classification of Web content.* SIGIR 2000;"
        " as the HIERMULT baseline of " + _CITE_000,
        notes=dict(_RDA_NOTES),
    ),
    MethodCard(
        name="transfer",
        title="TRANSFER — recursive SVM with parent-child similarity",
        idea=(
            "The classic way to share strength along the tree: the same recursive classifier "
            "and sibling hinge as ORTHOGNL, but the regulariser pulls each child's weight "
            "vector *towards* its parent's. The opposite bet to ORTHOGNL."
        ),
        objective=(
            r"\min_{w}\ \frac12 \sum_{i \in \mathcal Y}\Big(\|w_i\|^2 + \sum_{j \in \mathcal "
            r"C(i)} \|w_i - w_j\|^2\Big) + " + _SIBLING_HINGE
        ),
        equations="seed 000, Section 5 (TRANSFER; errata: ||w_ii|| is ||w_i||); Algorithm 1",
        prediction=_RECURSIVE_PRED,
        symbols=_TREE_SYMBOLS,
        solver=_RDA_SOLVER + r" $\Psi$ is the whole quadratic regulariser (closed-form step).",
        bounds=_RDA_BOUNDS,
        citation=_CITE_000 + " (TRANSFER baseline, after Cai & Hofmann 2004, Dekel et al. 2004).",
        notes=dict(_RDA_NOTES),
    ),
    MethodCard(
        name="treeloss",
        title="TREELOSS — Cai & Hofmann's hierarchical SVM",
        idea=(
            "A flat classifier whose class vectors are sums of increments along the path "
            r"($w_y = \sum_{j \in \mathcal A^+(y)} u_j$), so related classes share weights; "
            "mistakes are charged by how far apart the two classes sit in the tree (slack "
            "rescaled by half the tree distance)."
        ),
        objective=(
            r"\min_{u}\ \frac12\sum_{i \in \mathcal Y}\|u_i\|^2 + \frac{C}{N}\sum_{k=1}^{N}"
            r"\max_{y \ne y_k} \Delta(y_k, y)\,\Big[1 - \sum_{i \in \mathcal A^+(y_k)} u_i^\top "
            r"x_k + \sum_{j \in \mathcal A^+(y)} u_j^\top x_k\Big]_+ ,\quad \Delta = "
            r"\tfrac12\gamma \quad \text{(eq. 3)}"
        ),
        equations="seed 000, Section 5 (TREELOSS, slack rescaling per the errata), eq. (3)",
        prediction=r"f(x) = \arg\max_{y \in \mathcal Y} \sum_{j \in \mathcal A^+(y)} u_j^\top x"
        r" \quad \text{(eq. 2, 3)}",
        symbols=r"$\gamma(y, y')$: the number of edges between $y$ and $y'$ in the tree.",
        solver=_RDA_SOLVER + r" Here $\Psi = \frac12\|u\|^2$.",
        bounds=_RDA_BOUNDS,
        citation="L. Cai, T. Hofmann. *Hierarchical document categorization with support "
        "vector machines.* CIKM 2004; as the TREELOSS baseline of " + _CITE_000,
        notes=dict(_RDA_NOTES),
    ),
    MethodCard(
        name="hr-svm",
        title="HR-SVM — hierarchically regularised SVM",
        idea=(
            "One binary SVM per leaf, as in one-vs-rest, plus a weight vector at every internal "
            "node; each vector is pulled towards its parent's. Rare leaves thus borrow strength "
            "from their siblings through the shared parent. The coupling is only parent-child, "
            "so nodes of one depth parity can be solved in parallel."
        ),
        objective=_HR_OBJ_REG
        + r" + C\sum_{n \in T}\sum_{i=1}^{M} \big(1 - y_{in}\, w_n^\top x_i\big)_+ "
        r"\quad \text{(eq. 2)}",
        equations="seed 001, eq. (2); updates eq. (4)-(7); Algorithm 1, Section 4.3",
        prediction=r"f(x) = \arg\max_{n \in T} w_n^\top x \quad (\text{multi-label: also every "
        r"}n \text{ with } w_n^\top x > 0)",
        symbols=_HR_SYMBOLS,
        solver=(
            "Block coordinate descent (Algorithm 1): internal nodes take the closed form "
            r"$w_n = \frac{1}{|C_n|+1}\big(w_{\pi(n)} + \sum_{c \in C_n} w_c\big)$ (eq. 4); "
            "leaves solve their dual by coordinate descent (eq. 5-7, gradient per the errata) "
            "and set $w_n = w_{\\pi(n)} + \\sum_i \\alpha_i y_{in} x_i$ (eq. 7). Even then odd "
            "levels, each in parallel (Section 4.3)."
        ),
        bounds=_HR_BOUNDS,
        citation=_CITE_001,
        notes=dict(_HR_NOTES),
    ),
    MethodCard(
        name="hr-lr",
        title="HR-LR — hierarchically regularised logistic regression",
        idea=(
            "HR-SVM with the logistic loss: the same parent-child regulariser, smooth leaf "
            "problems solved by L-BFGS. The paper finds it better on smaller data sets."
        ),
        objective=_HR_OBJ_REG
        + r" + C\sum_{n \in T}\sum_{i=1}^{M} \log\big(1 + e^{-y_{in}\, w_n^\top x_i}\big) "
        r"\quad \text{(eq. 3)}",
        equations="seed 001, eq. (3); updates eq. (4), (8); Algorithm 1, Section 4.3",
        prediction=r"f(x) = \arg\max_{n \in T} w_n^\top x",
        symbols=_HR_SYMBOLS,
        solver=(
            "Block coordinate descent (Algorithm 1): closed form (eq. 4) for internal nodes, "
            "L-BFGS on each leaf's problem (eq. 8), warm-started; even/odd levels in parallel."
        ),
        bounds=_HR_BOUNDS,
        citation=_CITE_001,
        notes=dict(_HR_NOTES),
    ),
    MethodCard(
        name="ovr-svm",
        title="SVM — one-vs-rest linear SVM on the leaves",
        idea=(
            "Seed 001's flat baseline: an independent binary SVM per leaf (is it this leaf or "
            "not?), no bias, no hierarchy. HR-SVM with every parent vector fixed at zero."
        ),
        objective=r"\forall n \in T:\ \min_{w_n}\ \tfrac12\|w_n\|^2 + C\sum_{i=1}^{M}"
        r"\big(1 - y_{in}\, w_n^\top x_i\big)_+",
        equations="seed 001, Section 5.2 (baseline 'SVM'); eq. (2) without the hierarchy",
        prediction=r"f(x) = \arg\max_{n \in T} w_n^\top x",
        symbols=_HR_SYMBOLS,
        solver="liblinear's dual coordinate descent (Hsieh et al. 2008), one problem per leaf.",
        bounds=_OVR_BOUNDS,
        citation=_CITE_001 + " (baseline).",
        notes=dict(_OVR_NOTES),
    ),
    MethodCard(
        name="ovr-lr",
        title="LR — one-vs-rest logistic regression on the leaves",
        idea="Seed 001's other flat baseline: an independent L2-regularised logistic "
        "regression per leaf, no bias, no hierarchy.",
        objective=r"\forall n \in T:\ \min_{w_n}\ \tfrac12\|w_n\|^2 + C\sum_{i=1}^{M}"
        r"\log\big(1 + e^{-y_{in}\, w_n^\top x_i}\big)",
        equations="seed 001, Section 5.2 (baseline 'LR'); eq. (3) without the hierarchy",
        prediction=r"f(x) = \arg\max_{n \in T} w_n^\top x",
        symbols=_HR_SYMBOLS,
        solver="liblinear (trust-region Newton / dual CD), one problem per leaf.",
        bounds=_OVR_BOUNDS,
        citation=_CITE_001 + " (baseline).",
        notes=dict(_OVR_NOTES),
    ),
    MethodCard(
        name="hieron",
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
        symbols=r"$\mathcal P(v)$: the path from the root to $v$; $\gamma$: the tree distance; "
        r"each update solves the projection problem of eq. (6).",
        solver="Online passive-aggressive updates (Algorithm 1), conservative: only rounds with "
        "a mistake change the prototypes (errata). Primal form for the linear kernel, kernel "
        "form (eq. 11-12) otherwise.",
        bounds=_HIERON_BOUNDS,
        citation=_CITE_002,
        notes=dict(_HIERON_NOTES),
    ),
    MethodCard(
        name="hieron-batch",
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
        notes=dict(_HIERON_NOTES),
    ),
    MethodCard(
        name="hieron-flat",
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
        notes=dict(_HIERON_NOTES),
    ),
    MethodCard(
        name="hieron-greedy",
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
        notes=dict(_HIERON_NOTES),
    ),
    MethodCard(
        name="hsvm",
        title="HSVM — hierarchical structured SVM (Cai & Hofmann)",
        idea=(
            "A structured SVM whose label is a whole root-to-leaf path (or several): the score "
            "of a label sums the weight vectors of all its nodes, and the margin required "
            "against a wrong label grows with the Hamming distance between the two node sets. "
            "Deep leaves get more vectors, hence weaker regularisation: the imbalance NHSVM "
            "fixes."
        ),
        objective=(
            r"\min_W\ \lambda\sum_n\|W_n\|_2^2 + \frac1N\sum_i \max_{y \in \mathcal Y}\Big\{"
            r"\sum_{n \in y} W_n x_i - \sum_{n \in y_i} W_n x_i + \Delta(y, y_i)\Big\} \quad "
            r"\text{(eq. 2, 3)}"
        ),
        equations="seed 003, eq. (1)-(3) (Section 4)",
        prediction=r"\hat y(x) = \arg\max_{y \in \mathcal Y}\sum_{n \in y} W_n x",
        symbols=r"$y$: a label as its set of nodes (leaf and ancestors); $\Delta^H(y, y') = "
        r"|y \triangle y'|$ (Hamming). The loss is averaged ($\lambda$ = paper's $\lambda / N$).",
        solver=_SGD_SOLVER,
        bounds=_SGD_BOUNDS,
        citation="L. Cai, T. Hofmann. *Hierarchical document categorization with support "
        "vector machines.* CIKM 2004; as reviewed in " + _CITE_003,
        notes=dict(_SGD_NOTES),
    ),
    MethodCard(
        name="nhsvm",
        title="NHSVM — normalised hierarchical SVM",
        idea=(
            "HSVM with two normalisations: each node gets a weight alpha_n with the weights on "
            "every root-to-leaf path summing to one, so every label's feature map has the same "
            "norm however deep it is; and the required margin is the normalised distance "
            r"$\tilde\Delta$, not the raw Hamming count. Adding a redundant node no longer "
            "changes the model (Theorem 1)."
        ),
        objective=(
            r"\min_W\ \lambda\sum_n\|W_n\|_2^2 + \frac1N\sum_i\max_{y \in \mathcal Y}\Big\{"
            r"\sum_{n \in y}\sqrt{\alpha_n}\,W_n x_i - \sum_{n \in y_i}\sqrt{\alpha_n}\,W_n x_i"
            r" + \tilde\Delta(y, y_i)\Big\} \ \text{(eq. 10)}"
            r"\\ \tilde\Delta(y, y_i) = \sqrt{\textstyle\sum_{n \in y \triangle y_i}\alpha_n} "
            r"\ \text{(eq. 9)},\qquad \sum_{n \in \bar{\mathcal A}(l)}\alpha_n = 1\ \ \forall l"
            r" \in \mathcal L \ \text{(eq. 4)}"
        ),
        equations="seed 003, eq. (4)-(10), (12); alpha by eq. (6)/(7), DAGs eq. (8)",
        prediction=r"\hat y(x) = \arg\max_{y}\sum_{n \in y}\sqrt{\alpha_n}\,W_n x",
        symbols=r"eq. (6): $\min \sum_n \alpha_n^\rho$; eq. (7): $\max \min_n \alpha_n$ with "
        r"$\alpha_n \ge \alpha_{\text{parent}}$; multi-label uses the decomposable loss of "
        "Section 7.1.",
        solver=_SGD_SOLVER,
        bounds=_SGD_BOUNDS,
        citation=_CITE_003,
        notes=dict(_SGD_NOTES),
    ),
    MethodCard(
        name="nhsvm13",
        title="NHSVM, variant of eq. (13)",
        idea=(
            "NHSVM with the margin term divided by the distance between the two normalised "
            "class attributes: every wrong label must be beaten by exactly 1, and the feature "
            "difference has the norm of x. Single-label only (the normalisation does not "
            "decompose over nodes)."
        ),
        objective=(
            r"\min_W\ \lambda\|w\|_2^2 + \frac1N\sum_i\max_{y \in \mathcal Y} w\cdot\Big("
            r"\frac{\tilde\wedge(y) - \tilde\wedge(y_i)}{\|\tilde\wedge(y) - \tilde\wedge(y_i)"
            r"\|_2}\otimes x_i\Big) + 1 \quad \text{(eq. 13)}"
        ),
        equations="seed 003, eq. (13); class attributes eq. (5)",
        prediction=r"\hat y(x) = \arg\max_{y}\ w\cdot(\tilde\wedge(y)\otimes x)",
        symbols=r"$[\tilde\wedge(y)]_n = \sqrt{\alpha_n}$ if $n \in y$, else 0 (eq. 5); the "
        r"$y = y_i$ term contributes 0.",
        solver=_SGD_SOLVER,
        bounds=_SGD_BOUNDS,
        citation=_CITE_003,
        notes=dict(_SGD_NOTES),
    ),
    MethodCard(
        name="ssvm",
        title="Shared SVM — learned normalisation (structured shared norm)",
        idea=(
            "Instead of fixing the node weights alpha from the tree's shape, learn them with "
            "the predictor: a joint convex problem whose regulariser is the structured shared "
            "Frobenius norm, which only departs from the flat multiclass SVM when sharing "
            "weights between related labels pays off. Alternates SGD on V with a closed-form "
            "alpha (Algorithm 1)."
        ),
        objective=(
            r"\min_{U, \alpha}\ \lambda\sum_n\frac{\|U_n\|_2^2}{\alpha_n} + \frac1N\sum_i"
            r"\max_{l}\Big\{\sum_{n \in \bar{\mathcal A}(l)} U_n x_i - \sum_{n \in \bar{"
            r"\mathcal A}(l_i)} U_n x_i + \Delta(l, l_i)\Big\}"
            r"\\ \text{s.t. } \sum_{n \in \bar{\mathcal A}(l)}\alpha_n \le 1,\ \alpha_n \ge 0 "
            r"\quad \text{(eq. 14; norm of eq. 15-16)}"
        ),
        equations="seed 003, eq. (14)-(16), (20); Algorithm 1 (Section 7.2)",
        prediction=r"\hat l(x) = \arg\max_{l}\sum_{n \in \bar{\mathcal A}(l)} U_n x",
        symbols=r"$U_n = \sqrt{\alpha_n}V_n$; for fixed $U$ the optimal $\alpha$ of eq. (20) "
        r"has the $O(M)$ closed form of Algorithm 1 (trees, single label).",
        solver="Alternation (Section 7.2): `epochs_per_alpha` Pegasos epochs on V, then "
        "alpha in closed form (Algorithm 1), for at most `rounds` rounds. `solver='bcfw'`: "
        "each V-step is solved exactly by block-coordinate Frank-Wolfe on its dual, "
        "warm-started from the previous round's dual point.",
        bounds="No certificate with Pegasos (the default): `upper` is the eq. (14) objective of "
        "the best state "
        "so far (after each epoch, and after each alpha step, which never increases it). "
        "BCFW: `lower` is certified for the joint problem. The dual point of the last V-step "
        "gives a lower bound for every alpha at once: the linear maximum over the alpha "
        "polytope is its heaviest antichain (a bottom-up pass). The gap closes as the rounds "
        "converge (minimax theorem).",
        citation=_CITE_003,
        notes=dict(_SGD_NOTES),
    ),
    MethodCard(
        name="mftree",
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
        "(Algorithm 1; deterministic sign rule, two non-empty children guaranteed); above depth "
        "tau, the class-size / mean-distance split of Algorithm 3.",
        bounds=_ONE_SHOT_BOUNDS
        + " Judge the induced tree against a known one with the tree-similarity MSE "
        r"($A_{ij} = 1/\text{numhops}(c_i, c_j)$, `hierlab.metrics.tree_similarity_mse`).",
        citation=_CITE_004,
        notes=dict(_TREE_INDUCTION_NOTES),
    ),
    MethodCard(
        name="cmtl",
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
        solver="liblinear for the confusion classifiers and the node classifiers; eigenvectors "
        "for the splits.",
        bounds=_ONE_SHOT_BOUNDS,
        citation="S. Bengio, J. Weston, D. Grangier. *Label embedding trees for large "
        "multi-class tasks.* NIPS 2010; baseline of " + _CITE_004,
        notes={
            "C": "LinearSVC regularisation of the confusion and node classifiers (0.1-10).",
            "holdout": "Fraction of the training rows used to measure the confusions; 0.2-0.3.",
            "random_state": "Seed of the held-out split.",
        },
    ),
    MethodCard(
        name="topdown",
        title="Top-down local classifier per parent node",
        idea=(
            "What most practitioners use: at every internal node a multiclass LinearSVC "
            "chooses a child, trained on the examples below that node; prediction walks from "
            "the root to a leaf. The 'greedy' scheme that seeds 000 and 002 compare against."
        ),
        objective=(
            r"\forall p \notin \mathcal L,\ c \in \mathcal C(p):\ \min_{w_c, b_c}\ "
            r"\frac12\|w_c\|^2 + C\sum_{k:\, y_k \in \mathcal D(p)}\big[1 - s_{kc}(w_c^\top x_k"
            r" + b_c)\big]_+^2,\quad s_{kc} = \pm 1 \ (c = c_k \text{ or not})"
        ),
        equations="Silla & Freitas (2011) 'local classifier per parent node'; HIERMULT of seed "
        "000 with liblinear",
        prediction=r"f(x):\ i \leftarrow 0;\ \text{while } \mathcal C(i) \neq \emptyset:\ "
        r"i \leftarrow \arg\max_{c \in \mathcal C(i)} w_c^\top x + b_c",
        symbols=r"$c_k$: the child of $p$ on the path to $y_k$ (LinearSVC's one-vs-rest "
        "squared hinge with an intercept; binary nodes use one vector).",
        solver="liblinear (LinearSVC) at each internal node, in parallel over nodes.",
        bounds=_ONE_SHOT_BOUNDS,
        citation="C. Silla, A. Freitas. *A survey of hierarchical classification across "
        "different application domains.* DMKD 2011; S. Dumais, H. Chen, SIGIR 2000.",
        notes={
            "C": "LinearSVC regularisation at each parent node; 0.1-10, larger = less regularised.",
        },
    ),
]

#: The card registry: method name -> :class:`MethodCard`.
CARDS: dict[str, MethodCard] = {c.name: c for c in _LIST}


def missing_cards() -> list[str]:
    """Registered methods without a card (should be empty)."""
    return [m for m in list_methods() if m not in CARDS]


def method_card(name: str) -> MethodCard:
    """The card of the registered method ``name`` (case-insensitive).

    Raises
    ------
    ParameterError
        ``name`` is not a registered method (from the registry).
    MissingCardError
        The method is registered but has no card.
    """
    spec = get_method(name)  # raises ParameterError for an unknown method
    try:
        return CARDS[spec.name]
    except KeyError:
        raise MissingCardError(
            f"method {spec.name!r} is registered but has no method card: add a MethodCard for "
            "it to hierlab/experiments/cards.py (idea, objective with the seed's equation "
            "numbers, solver, bounds, citation)"
        ) from None


def cards_markdown(names: list[str] | None = None) -> str:
    """Every method card (or those in ``names``) as one Markdown document.

    Raises
    ------
    MissingCardError
        When a requested method has no card.
    """
    names = list_methods() if names is None else names
    parts = ["# hierlab method cards", ""]
    for n in names:
        parts.append(method_card(n).markdown(heading="##"))
    return "\n".join(parts)
