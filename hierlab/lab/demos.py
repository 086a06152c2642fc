"""Guided demos: presets that set data, taxonomy, methods and parameters in one click.

Each :class:`DemoPreset` is plain data: a built-in data set and its generator arguments, the
split, the runs (method, parameters, seed) and what to look at. :func:`run_demo` executes a
preset through the public API (:func:`hierlab.lab.export.run_session`, so a demo is also an
exportable :class:`~hierlab.lab.export.Session`), adds the demo's own analysis (a
histogram difference, an admissibility check, a tree comparison) and returns a
:class:`DemoResult` with the runs' metrics and histories, the figures (from
:mod:`hierlab.plots`) and the observations, with the numbers measured in this run.

Sizes are shrunk so that each demo runs in seconds on a laptop (a classroom), not minutes; the
``hierlab reproduce`` commands run the full-size experiments.

One source for the app and the notebooks: a preset carries its text (the question, the idea,
what to look at, exercises) and :func:`run_demo` its code. The app's Guided demos page shows
:meth:`DemoPreset.markdown` and runs :func:`run_demo`; the teaching notebook of the preset's
seed (``docs/notebooks/<DemoPreset.notebook>``) displays the same Markdown and calls the same
function, so neither can drift from the other.

========================  =====================================================================
``hierarchy-helps``       Does the hierarchy help? Batch Hieron on the tree vs on the flattened
                          taxonomy (seed 002), gamma histograms and their difference.
``certified-optimality``  ORTHOGNL's certified bounds closing (seed 000, Algorithm 1), and
                          what an inadmissible alpha does (Theorem 1, eq. 6).
``induce-taxonomy``       MF-Tree (seed 004) on text with a known tree: the induced tree
                          against the truth (tree-similarity MSE), against a random tree.
========================  =====================================================================
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy
from hierlab.lab.export import DataSource, Progress, RunResult, RunSpec, Session, SplitSpec

__all__ = ["DEMOS", "DemoPreset", "DemoResult", "list_demos", "random_binary_tree", "run_demo"]


@dataclass(frozen=True)
class DemoPreset:
    """A guided demo as data.

    Attributes
    ----------
    name : str
        Key (``"hierarchy-helps"``).
    title : str
    question : str
        The question the demo answers, in one sentence.
    data : str
        Built-in data set (``hierlab.datasets.catalog``).
    data_params : dict
        Generator arguments (sizes shrunk for a classroom).
    split : dict
        ``{"mode": "own"}`` or ``{"mode": "random", "test_size", "seed"}``.
    runs : tuple of RunSpec
        The methods, parameters and seeds.
    look_at : tuple of str
        What to look at, in order.
    seeds : str
        Paper(s) the demo illustrates.
    idea : str
        The idea behind the demo, in Markdown (a paragraph or two).
    exercises : tuple of str
        Questions to try after the run, in Markdown.
    notebook : str
        The teaching notebook that runs this demo (a file name in ``docs/notebooks``).
    """

    name: str
    title: str
    question: str
    data: str
    data_params: dict[str, Any]
    split: dict[str, Any]
    runs: tuple[RunSpec, ...]
    look_at: tuple[str, ...]
    seeds: str = ""
    idea: str = ""
    exercises: tuple[str, ...] = ()
    notebook: str = ""

    def markdown(self) -> str:
        """The demo's text in Markdown: the question, the idea and what to look at.

        Returns
        -------
        str
            What the app's Guided demos page and the notebooks show above the run.
        """
        lines = [f"**{self.question}**", ""]
        if self.idea:
            lines += [self.idea.strip(), ""]
        lines += ["**What to look at**", ""]
        lines += [f"{k}. {text}" for k, text in enumerate(self.look_at, start=1)]
        return "\n".join(lines) + "\n"

    def exercises_markdown(self) -> str:
        """The exercises as a numbered Markdown list (empty without exercises).

        Returns
        -------
        str
        """
        if not self.exercises:
            return ""
        lines = ["**Exercises**", ""]
        lines += [f"{k}. {text}" for k, text in enumerate(self.exercises, start=1)]
        return "\n".join(lines) + "\n"

    def session(self) -> Session:
        """The preset as an exportable session (data, split, runs)."""
        return Session(
            data=DataSource.builtin(self.data, dict(self.data_params)),
            split=SplitSpec.from_dict(self.split),
            runs=[
                RunSpec(r.method, dict(r.params), r.seed, r.taxonomy, dict(r.induce), r.label)
                for r in self.runs
            ],
            title=self.title,
        )


@dataclass
class DemoResult:
    """What :func:`run_demo` returns.

    Attributes
    ----------
    preset : DemoPreset
    runs : list of RunResult
        Each run's estimator, taxonomy, predictions, metrics and solver history.
    metrics : DataFrame
        One row per run (``label``, ``method`` and the metrics of
        ``hierlab.evaluation.metrics.evaluate``).
    figures : dict of str to plotly Figure
        Titled figures, in display order.
    observations : list of str
        What the demo shows, with the numbers of this run.
    extra : dict
        Demo-specific values (``max_alpha``, ``inadmissible_error``, ``tree_mse`` ...).
    seconds : float
        Wall-clock time of the demo.
    """

    preset: DemoPreset
    runs: list[RunResult]
    metrics: pd.DataFrame
    figures: dict[str, Any] = field(default_factory=dict)
    observations: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def markdown(self) -> str:
        """What the run shows, with this run's numbers, as a Markdown list.

        Returns
        -------
        str
            One bullet per observation (the app's page and the notebooks show it).
        """
        return "\n".join(f"- {text}" for text in self.observations) + "\n"

    def run(self, label: str) -> RunResult:
        """The run called ``label``.

        Parameters
        ----------
        label : str

        Returns
        -------
        RunResult

        Raises
        ------
        KeyError
            No run has that label.
        """
        for r in self.runs:
            if r.label == label:
                return r
        raise KeyError(label)


# ------------------------------------------------------------------------------------ presets
_HIERARCHY = DemoPreset(
    name="hierarchy-helps",
    title="Does the hierarchy help?",
    question="Hieron with and without the tree on the same data: are the mistakes nearer?",
    data="hieron-synthetic",
    # the literal 'variance 0.16' reading (sigma = 0.4): noisy enough for mistakes to matter
    data_params={
        "n_train_per_label": 20,
        "n_test_per_label": 10,
        "noise_std": 0.4,
        "random_state": 0,
    },
    split={"mode": "own"},
    runs=(
        RunSpec("hieron-batch", {"epochs": 2}, seed=0, label="Hieron (tree)"),
        RunSpec("hieron-flat", {"epochs": 2}, seed=0, label="Hieron (flat)"),
    ),
    look_at=(
        "The tree-induced error (mean gamma between truth and prediction): lower with the tree.",
        "The gamma histogram difference (tree minus flat): the hierarchy trades far mistakes "
        "(large gamma, a different branch) for near ones (gamma = 1 or 2: a parent, child or "
        "sibling) — the pattern of Fig. 2 of seed 002.",
        "The error per level: the tree version errs less at the top levels.",
    ),
    seeds="002",
    idea=(
        "Hieron (seed 002) scores a label by the sum of the prototypes on its path in the tree "
        "and updates them with a margin that grows with the tree distance gamma between the "
        "true and the predicted label. The same algorithm on the *flattened* taxonomy (every "
        "label a child of the root) is a multiclass perceptron: it knows nothing of the tree. "
        "Both see the same training data; only the taxonomy differs."
    ),
    exercises=(
        "Raise the noise (`noise_std`) to 0.8: does the hierarchy help more or less?",
        "Train `hieron` (online, last hypothesis) instead of `hieron-batch`: how do the "
        "histograms change?",
        "Which levels gain most from the tree? Read the error-per-level chart.",
    ),
    notebook="002_hieron.ipynb",
)

#: The RDA settings both runs of the certified-optimality demo share. C multiplies the summed
#: hinge (scikit-learn's C); 216 training examples, so C = 0.005 is about the paper's C/N
#: with C = 1.
_RDA = {"C": 0.005, "tol": 1e-3, "rtol": 1e-3, "max_iter": 1500, "solver": "rda"}

_CERTIFIED = DemoPreset(
    name="certified-optimality",
    title="Certified optimality (ORTHOGNL)",
    question="How do we know the solver is done? And why can't alpha be anything?",
    data="hieron-synthetic",
    data_params={
        "n_train_per_label": 8,
        "n_test_per_label": 4,
        "depth": 3,
        "noise_std": 0.3,
        "random_state": 1,
    },
    split={"mode": "own"},
    runs=(
        RunSpec("orthognl", {"alpha": 0.2, **_RDA}, label="ORTHOGNL (alpha = 0.2)"),
        RunSpec("flatmult", dict(_RDA), label="FLATMULT"),
    ),
    look_at=(
        "The bounds chart: the upper bound (best objective so far) falls, the lower bound "
        "(RDA's dual-averaging minorant) rises, and the optimum is always between them; the "
        "gap on the log axis is a proof of how far from optimal the weights are.",
        "The admissibility curve: lambda_min of the comparison matrix of K decreases with alpha "
        "and crosses zero at the taxonomy's largest admissible alpha; beyond it the objective "
        "is not convex and hierlab refuses to train (the error message names the limit).",
        "The test metrics of ORTHOGNL against the flat multiclass SVM.",
    ),
    seeds="000",
    idea=(
        "ORTHOGNL (seed 000) learns one weight vector per node and penalises the overlap of "
        "each node's weights with its ancestors' through the matrix K of eq. (6). The "
        "objective is convex only while K is positive semi-definite, which limits alpha; "
        "within that limit, Algorithm 1 (regularised dual averaging) reports an upper bound "
        "(the best objective so far) and a lower bound (a minorant of the objective) at every "
        "iteration."
    ),
    exercises=(
        "Run ORTHOGNL with `solver=\"bcfw\"` (the fast preset): how many iterations does it "
        "need for the same gap?",
        "Set alpha just below the largest admissible value: what happens to lambda_min and to "
        "the speed of RDA?",
        "Is a smaller gap always a better test accuracy? Try `rtol=1e-1` against `rtol=1e-4`.",
    ),
    notebook="000_orthogonal_transfer.ipynb",
)

_INDUCE = DemoPreset(
    name="induce-taxonomy",
    title="Induce a taxonomy (MF-Tree)",
    question="Given only labelled documents, can MF-Tree recover the hidden topic tree?",
    data="hierarchical-text",
    data_params={
        "n_samples": 3000,
        "n_classes": 16,
        "n_features": 800,
        "depth": 2,
        "noise": 0.85,
        "random_state": 0,
    },
    split={"mode": "own"},
    runs=(
        RunSpec("mftree", {"tau": 0}, seed=0, label="MF-Tree (induced tree)"),
        RunSpec("topdown", {"C": 1.0}, label="top-down (true tree)"),
        RunSpec("cmtl", {"C": 1.0}, seed=0, label="CMTL (induced tree)"),
    ),
    look_at=(
        "The induced tree next to the true one: classes that share a parent in the truth "
        "should end up in the same subtree.",
        "The tree-similarity MSE (seed 004, A_ij = 1/numhops) of MF-Tree and of CMTL's label "
        "tree, beside the true tree made binary and random binary trees.",
        "The accuracy of routing down the induced tree (no taxonomy given) against a top-down "
        "classifier that was given the true tree.",
    ),
    seeds="004",
    idea=(
        "MF-Tree (seed 004) splits the classes in two at every node, choosing the split that "
        "maximises a kernel dependence (HSIC) between the examples and the split, by a matrix "
        "factorisation; the leaves are the classes and prediction routes an example down the "
        "tree. The data here come from a generator with a known topic tree, so the induced "
        "tree can be scored against the truth."
    ),
    exercises=(
        "Raise `tau` to 4: is the tree closer to the truth, and how much slower is the fit?",
        "Lower the generator's `noise` to 0.6: does the MSE approach the binary-refinement "
        "floor?",
        "Train a top-down classifier on the induced tree (`hierlab.induce_taxonomy`) and "
        "compare it with the true tree's.",
    ),
    notebook="004_mftree.ipynb",
)

#: Every preset by name, in display order.
DEMOS: dict[str, DemoPreset] = {d.name: d for d in (_HIERARCHY, _CERTIFIED, _INDUCE)}


def list_demos() -> list[str]:
    """Names of the guided demos, in display order."""
    return list(DEMOS)


# ------------------------------------------------------------------------------------ running
def _metrics_table(runs: list[RunResult]) -> pd.DataFrame:
    return pd.DataFrame([{"label": r.label, "method": r.spec.method, **r.metrics} for r in runs])


def _step(progress: Progress | None, lo: float, hi: float) -> Progress | None:
    if progress is None:
        return None
    return lambda f, text: progress(lo + (hi - lo) * f, text)


def _hierarchy_analysis(res: DemoResult) -> None:
    from hierlab import plots
    from hierlab.evaluation.metrics import error_per_level, gamma_histogram

    tree, flat = res.runs
    test_y = res.extra.pop("_test_y")
    tax = tree.taxonomy
    hists = {r.label: gamma_histogram(test_y, r.y_pred, tax) for r in res.runs}
    res.figures["gamma histogram"] = plots.gamma_histogram_figure(
        hists, title="distribution of gamma(y, y_hat) on the test set"
    )
    res.figures["gamma difference (tree - flat)"] = plots.gamma_histogram_figure(
        hists,
        difference=(tree.label, flat.label),
        title="fraction of test examples at each gamma: tree minus flat (seed 002, Fig. 2)",
    )
    levels = {r.label: error_per_level(test_y, r.y_pred, tax) for r in res.runs}
    res.figures["error per level"] = plots.error_per_level_figure(levels, title="error per level")
    res.figures["metrics"] = plots.metric_bars_figure(
        res.metrics.drop(columns=["method"]).rename(columns={"label": "method"}),
        metrics=["zero_one_error", "tree_induced_error"],
        title="test errors",
    )
    gt, gf = (r.metrics["tree_induced_error"] for r in (tree, flat))
    zt, zf = (r.metrics["zero_one_error"] for r in (tree, flat))
    ht = hists[tree.label].set_index("gamma")["fraction"]
    hf = hists[flat.label].set_index("gamma")["fraction"]
    far_t = float(ht[ht.index >= 3].sum())
    far_f = float(hf[hf.index >= 3].sum())
    res.extra.update(tree_error=gt, flat_error=gf, far_tree=far_t, far_flat=far_f)
    better = "lower" if gt < gf else "not lower"
    res.observations += [
        f"Tree-induced error: {gt:.3f} with the tree vs {gf:.3f} flat ({better} with the "
        f"hierarchy); 0/1 error {zt:.3f} vs {zf:.3f}.",
        f"Far mistakes (gamma >= 3): {far_t:.1%} of the test set with the tree vs {far_f:.1%} "
        "flat.",
    ]


def _certified_analysis(res: DemoResult) -> None:
    from plotly import graph_objects as go

    from hierlab import plots
    from hierlab.core.registry import make_estimator
    from hierlab.core.regularizers import max_admissible_alpha, smallest_comparison_eigenvalue

    ortho = res.runs[0]
    tax = ortho.taxonomy
    res.figures["bounds"] = plots.bounds_figure(
        {r.label: r.history for r in res.runs}, title="certified bounds (seed 000, Algorithm 1)"
    )
    amax = max_admissible_alpha(tax)
    grid = np.linspace(0.0, 1.5 * amax if np.isfinite(amax) else 2.0, 31)
    lam = [smallest_comparison_eigenvalue(tax, float(a)) for a in grid]
    fig = go.Figure(go.Scatter(x=grid, y=lam, mode="lines+markers", name="lambda_min(K bar)"))
    fig.add_hline(y=0.0, line_dash="dash", line_color="grey")
    if np.isfinite(amax):
        fig.add_vline(x=amax, line_dash="dot", line_color="#e45756")
    used = float(ortho.spec.params.get("alpha", 1.0))
    fig.add_trace(
        go.Scatter(
            x=[used],
            y=[smallest_comparison_eigenvalue(tax, used)],
            mode="markers",
            marker={"size": 12, "color": "#54a24b"},
            name=f"alpha used = {used:g}",
        )
    )
    fig.update_layout(
        title=f"admissibility of K (eq. 6): largest admissible alpha = {amax:.4g}",
        xaxis_title="alpha",
        yaxis_title="smallest eigenvalue of the comparison matrix",
        template="plotly_white",
    )
    res.figures["admissibility"] = fig
    bad = float(f"{1.25 * amax:.3g}") if np.isfinite(amax) else 1.0
    message = ""
    try:
        make_estimator("orthognl", taxonomy=tax, alpha=bad, max_iter=1).fit(
            res.extra["_train_X"], res.extra["_train_y"]
        )
    except ParameterError as exc:
        message = str(exc)
    res.extra.pop("_train_X")
    res.extra.pop("_train_y")
    res.extra.update(
        max_alpha=float(amax),
        lambda_min=float(getattr(ortho.estimator, "lambda_min_", np.nan)),
        inadmissible_alpha=bad,
        inadmissible_error=message,
    )
    for r in res.runs:
        est = r.estimator
        res.observations.append(
            f"{r.label}: {len(r.history)} RDA iterations, objective {est.objective_:.5g} within a "
            f"certified gap of {est.gap_:.2g} (lower bound {est.lower_bound_:.5g}); "
            + ("converged." if est.converged_ else "stopped at max_iter.")
        )
    res.observations += [
        f"This taxonomy ({tax.n_nodes} nodes, depth {tax.max_depth}) admits alpha < {amax:.4g}; "
        f"with alpha = {used:g}, lambda_min = {res.extra['lambda_min']:.4g} is the strong "
        "convexity RDA uses (the step is -g_bar / lambda_min).",
        f"With alpha = {bad:g} training is refused: "
        + (message if message else "(no error was raised — unexpected)"),
    ]


def _balanced_binary(name: str, items: list[Any], edges: list[tuple[str, str]], grow: Any) -> None:
    """Hang ``items`` under ``name`` as a balanced binary tree; ``grow(node, item)`` attaches one
    item (a leaf name, or a subtree to expand)."""
    if len(items) == 1:
        grow(name, items[0])
        return
    mid = len(items) // 2
    for k, part in enumerate((items[:mid], items[mid:])):
        if len(part) == 1:
            grow(name, part[0])
        else:
            child = f"{name}~{k}"  # a synthetic internal node
            edges.append((name, child))
            _balanced_binary(child, part, edges, grow)


def random_binary_tree(classes: list[str], rng: np.random.Generator) -> Taxonomy:
    """A balanced binary tree over ``classes`` in a random order (the chance baseline).

    Parameters
    ----------
    classes : list of str
        The leaves.
    rng : numpy.random.Generator
        Draws the order.

    Returns
    -------
    Taxonomy
        Root ``"root"``, internal nodes ``"<parent>~0"`` / ``"<parent>~1"``, leaves ``classes``.
    """
    order = [classes[i] for i in rng.permutation(len(classes))]
    edges: list[tuple[str, str]] = []
    _balanced_binary("root", order, edges, lambda parent, leaf: edges.append((parent, leaf)))
    return Taxonomy.from_edges(edges)


def _binary_refinement(tax: Taxonomy) -> Taxonomy:
    """``tax`` made binary: the children of every node of more than two are hung as a balanced
    binary subtree (a reference level for the tree-similarity MSE of a binary tree)."""
    edges: list[tuple[str, str]] = []
    names = [str(n) for n in tax.names]

    def grow(parent: str, node: int) -> None:
        edges.append((parent, names[node]))
        kids = [int(c) for c in tax.children(node)]
        if kids:
            _balanced_binary(names[node], kids, edges, grow)

    _balanced_binary(names[0], [int(c) for c in tax.children(0)], edges, grow)
    return Taxonomy.from_edges(edges)


def _induce_analysis(res: DemoResult) -> None:
    from hierlab import plots
    from hierlab.evaluation.metrics import tree_similarity_mse

    mf = res.runs[0]
    true_tax = res.extra.pop("_true_taxonomy")
    induced = mf.estimator.taxonomy_
    classes = [str(true_tax.names[i]) for i in true_tax.leaves]
    mse = tree_similarity_mse(true_tax, induced, classes)
    rng = np.random.default_rng(0)
    rand = [
        tree_similarity_mse(true_tax, random_binary_tree(classes, rng), classes) for _ in range(20)
    ]
    floor = tree_similarity_mse(true_tax, _binary_refinement(true_tax), classes)
    cmtl_mse = tree_similarity_mse(true_tax, res.runs[2].estimator.taxonomy_, classes)
    res.extra.update(
        tree_mse=mse,
        cmtl_tree_mse=cmtl_mse,
        random_tree_mse=float(np.mean(rand)),
        best_binary_mse=floor,
        induced_taxonomy=induced,
    )
    res.figures["true taxonomy"] = plots.taxonomy_figure(true_tax, title="the hidden (true) tree")
    res.figures["induced taxonomy"] = plots.taxonomy_figure(
        induced, title="the tree MF-Tree induced from the training documents"
    )
    res.figures["metrics"] = plots.metric_bars_figure(
        res.metrics.drop(columns=["method"]).rename(columns={"label": "method"}),
        metrics=["accuracy", "macro_f1"],
        title="test accuracy and macro-F1",
    )
    res.observations += [
        f"Tree-similarity MSE of the induced tree against the truth: {mse:.4f}, against "
        f"{np.mean(rand):.4f} ± {np.std(rand):.4f} for 20 random binary trees over the same "
        f"{len(classes)} classes; CMTL's tree: {cmtl_mse:.4f}. For reference, the true tree "
        f"itself made binary (each node's children split in halves) scores {floor:.4f}: a "
        "binary tree cannot match a wider tree exactly, so that is the level of a tree that "
        "found the true groups.",
        f"Accuracy: {mf.metrics['accuracy']:.3f} routing down the MF-Tree (no classifier "
        f"trained), {res.runs[2].metrics['accuracy']:.3f} for CMTL's tree with LinearSVCs, "
        f"{res.runs[1].metrics['accuracy']:.3f} for top-down on the true tree.",
    ]


_ANALYSES: dict[str, Callable[[DemoResult], None]] = {
    "hierarchy-helps": _hierarchy_analysis,
    "certified-optimality": _certified_analysis,
    "induce-taxonomy": _induce_analysis,
}


def run_demo(name: str, progress: Progress | None = None) -> DemoResult:
    """Run the guided demo ``name`` end to end.

    Parameters
    ----------
    name : str
        A key of :data:`DEMOS`.
    progress : callable, optional
        ``progress(fraction_done, text)``: before each run, before the analysis, and at the
        end (``1.0, "done"``).

    Returns
    -------
    DemoResult

    Raises
    ------
    ParameterError
        For an unknown demo.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from hierlab.lab.export import run_session

    if name not in DEMOS:
        raise ParameterError(f"unknown demo {name!r}; available: {', '.join(DEMOS)}")
    preset = DEMOS[name]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        train, test, runs = run_session(preset.session(), progress=_step(progress, 0.0, 0.85))
    res = DemoResult(preset=preset, runs=runs, metrics=_metrics_table(runs))
    res.extra.update(
        _test_y=np.asarray(test.y, dtype=object),
        _train_X=train.X,
        _train_y=train.y,
        _true_taxonomy=train.taxonomy,
    )
    if progress is not None:
        progress(0.9, "analysing")
    _ANALYSES[name](res)
    for key in ("_test_y", "_train_X", "_train_y", "_true_taxonomy"):
        res.extra.pop(key, None)
    res.seconds = time.perf_counter() - t0
    if progress is not None:
        progress(1.0, "done")
    return res


def main() -> None:  # pragma: no cover - a classroom timing, not a test
    """``python -m hierlab.lab.demos``: run every demo and print its time and findings."""
    for name in list_demos():
        res = run_demo(name)
        print(f"{name}: {res.seconds:.1f} s")
        for text in res.observations:
            print(f"  - {text}")


if __name__ == "__main__":  # pragma: no cover
    main()
