"""A sparse bag-of-words generator whose topic words live on a known taxonomy.

Used for scale curves (10^6 documents, 10^4 classes) and as a built-in text-like data set. The
model is a hierarchical topic model in the spirit of the text benchmarks of seeds 000 and 003
(documents of a leaf class share vocabulary with documents of their sibling classes through the
words of their common ancestors):

1. A random tree of the given ``depth`` with exactly ``n_classes`` leaves, all at that depth;
   level ``k`` has about ``n_classes ** (k / depth)`` nodes, every internal node has a child.
2. Every non-root node ``v`` owns ``words_per_node`` words ``W(v)`` (disjoint when the
   vocabulary is large enough), drawn within ``W(v)`` with Zipf weights ``1 / (r + 1)``.
3. A document of leaf class ``c`` has ``Poisson(doc_length)`` tokens (at least one). Each token
   is background noise with probability ``noise`` (a Zipf law over the whole vocabulary), else a
   topic word: a level ``k`` of the path ``root -> c`` is drawn with probability
   ``level_weights[k]``, then a word of ``W(path[k])``.
4. Counts become sublinear TF-IDF (``TfidfTransformer(sublinear_tf=True)``, fitted on the
   training part) unless ``tfidf=False``.

Everything is vectorised over tokens (a few array operations per chunk of documents), so the
cost is linear in the number of tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.dataset import HierDataset, as_rng
from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.decoding import int32_csr

__all__ = ["CdfSampler", "make_hierarchical_text", "random_level_tree", "zipf_cdf"]

_TOKENS_PER_CHUNK = 4_000_000


def random_level_tree(
    n_classes: int, depth: int, random_state: Any = None
) -> tuple[Taxonomy, np.ndarray]:
    """A random tree with ``n_classes`` leaves, all at depth ``depth``.

    Level ``k`` holds ``m_k = max(m_{k-1}, round(n_classes ** (k / depth)))`` nodes; each parent
    at level ``k - 1`` receives one child, the remaining ``m_k - m_{k-1}`` children pick a parent
    uniformly at random. Node names spell their path: ``"t3"``, ``"t3.0"``, ``"t3.0.7"``.

    Parameters
    ----------
    n_classes : int
        Number of leaves (>= 1).
    depth : int
        Depth of every leaf (>= 1; 1 gives a flat taxonomy).
    random_state : int, Generator, RandomState or None

    Returns
    -------
    taxonomy : Taxonomy
    paths : ndarray of int of shape (n_classes, depth)
        ``paths[c, k]`` is the node id at depth ``k + 1`` on the path to the ``c``-th leaf
        (leaves in increasing id order, ``paths[:, -1]``).
    """
    if n_classes < 1 or depth < 1:
        raise ParameterError(f"n_classes and depth must be >= 1, got {n_classes}, {depth}")
    rng = as_rng(random_state)
    sizes = [1]
    for k in range(1, depth + 1):
        target = n_classes if k == depth else round(n_classes ** (k / depth))
        sizes.append(max(sizes[-1], min(n_classes, int(target))))
    # parent (index within the previous level) of every node of each level, grouped by parent
    level_parent: list[np.ndarray] = []
    for k in range(1, depth + 1):
        m_prev, m_k = sizes[k - 1], sizes[k]
        par = np.concatenate([np.arange(m_prev), rng.integers(0, m_prev, m_k - m_prev)])
        level_parent.append(np.sort(par))
    names: list[str] = ["root"]
    edges: list[tuple[str, str]] = []
    prev_names = ["root"]
    first_id = [0]
    for k, par in enumerate(level_parent, start=1):
        counts = np.bincount(par, minlength=sizes[k - 1])
        rank = np.arange(len(par)) - np.repeat(np.cumsum(counts) - counts, counts)
        cur = [
            f"t{r}" if k == 1 else f"{prev_names[p]}.{r}"
            for p, r in zip(par.tolist(), rank.tolist())
        ]
        edges.extend((prev_names[p], c) for p, c in zip(par.tolist(), cur))
        first_id.append(len(names))
        names.extend(cur)
        prev_names = cur
    tax = Taxonomy(edges, nodes=names)
    # ids follow the construction order (parents first, children grouped by parent)
    ids_per_level = [
        np.asarray(tax.index(names[first_id[k] : first_id[k] + sizes[k]]), dtype=np.int64)
        for k in range(1, depth + 1)
    ]
    # paths: walk up from the leaves, level by level
    paths = np.empty((sizes[depth], depth), dtype=np.int64)
    local = np.arange(sizes[depth])
    for k in range(depth, 0, -1):
        paths[:, k - 1] = ids_per_level[k - 1][local]
        local = level_parent[k - 1][local]
    order = np.argsort(paths[:, -1])
    return tax, paths[order]


def zipf_cdf(n: int, exponent: float = 1.0) -> np.ndarray:
    """The CDF of weights ``1 / (r + 1) ** exponent`` over ranks ``r < n`` (last entry 1)."""
    w = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** exponent
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    return cdf


class CdfSampler:
    """Exact inverse-CDF sampling with a guide table (Chen and Asau, 1974).

    ``sample(u)`` returns, for each ``u`` in [0, 1), the first index ``k`` with ``cdf[k] > u``
    (what ``np.searchsorted(cdf, u, side="right")`` returns), by starting from the guide
    ``table[floor(u * M)]`` and stepping forward; with ``M = 2 n`` buckets that is about one
    step, against ``log2 n`` cache-unfriendly probes of a binary search.
    """

    def __init__(self, cdf: np.ndarray) -> None:
        self.cdf = cdf
        self.M = 2 * len(cdf)
        grid = np.arange(self.M, dtype=np.float64) / self.M
        self.table = np.searchsorted(cdf, grid, side="right").astype(np.int64)

    def sample(self, u: np.ndarray) -> np.ndarray:
        """The first index ``k`` with ``cdf[k] > u``, for each ``u`` in [0, 1)."""
        idx = self.table[np.minimum((u * self.M).astype(np.int64), self.M - 1)]
        todo = np.flatnonzero(self.cdf[idx] <= u)
        while len(todo):
            idx[todo] += 1
            todo = todo[self.cdf[idx[todo]] <= u[todo]]
        return idx


def make_hierarchical_text(
    n_samples: int = 10_000,
    n_classes: int = 100,
    n_features: int = 5_000,
    depth: int = 3,
    *,
    doc_length: float = 50.0,
    words_per_node: int | None = None,
    noise: float = 0.85,
    level_weights: Sequence[float] | None = None,
    class_skew: float = 0.0,
    test_size: float | int = 0.25,
    tfidf: bool = True,
    random_state: Any = None,
) -> tuple[HierDataset, HierDataset]:
    """Sparse bag-of-words documents whose topic words live on a known random tree.

    Parameters
    ----------
    n_samples : int, default 10000
        Documents in total (train + test).
    n_classes : int, default 100
        Leaf classes; every document is labelled with one leaf.
    n_features : int, default 5000
        Vocabulary size.
    depth : int, default 3
        Depth of every leaf (see :func:`random_level_tree`).
    doc_length : float, default 50
        Mean number of tokens per document (Poisson, at least 1).
    words_per_node : int, optional
        Words owned by each non-root node. Default
        ``max(2, min(50, n_features * (1 - noise / 2) // (n_nodes - 1)))``. Nodes own disjoint
        word sets when ``words_per_node * (n_nodes - 1) <= n_features``, else sets drawn with
        replacement (shared words, like polysemy).
    noise : float in [0, 1), default 0.85
        Probability that a token is background noise (Zipf over the whole vocabulary).
    level_weights : sequence of float of length ``depth``, optional
        Probability of drawing a topic token from the node at depth ``k + 1`` of the class's
        path; default uniform.
    class_skew : float, default 0
        Class prior proportional to ``(rank + 1) ** -class_skew`` over a random order of the
        leaves (0: balanced).
    test_size : float or int, default 0.25
        Fraction (or number) of documents in the test part.
    tfidf : bool, default True
        Return sublinear TF-IDF (fitted on the training part); False returns raw counts.
    random_state : int, Generator, RandomState or None
        Everything is a function of this seed.

    Returns
    -------
    (train, test) : tuple of HierDataset
        ``X`` CSR float64 of shape (n, n_features) with int32 indices; ``y`` leaf names;
        ``meta`` holds ``node_words`` (ndarray of shape (n_nodes, words_per_node), row 0 the
        root's, unused) and ``class_prior``.

    Examples
    --------
    >>> train, test = make_hierarchical_text(200, n_classes=8, n_features=300, depth=2,
    ...                                      random_state=0)
    >>> train.X.shape, test.X.shape, len(train.taxonomy.leaves)
    ((150, 300), (50, 300), 8)
    """
    n_test = _check_arguments(n_samples, n_features, noise, doc_length, class_skew, test_size)
    rng = as_rng(random_state)
    tax, paths = random_level_tree(n_classes, depth, rng)
    model = _TopicModel.draw(
        rng, tax, paths, n_features, noise, _level_cdf(level_weights, depth), words_per_node
    )
    prior, cls = _draw_classes(rng, n_classes, n_samples, class_skew)
    lengths = np.maximum(1, rng.poisson(doc_length, n_samples)).astype(np.int64)
    X = model.corpus(rng, cls, lengths, max(1, int(_TOKENS_PER_CHUNK // max(doc_length, 1.0))))
    leaf_names = np.asarray([str(tax.names[i]) for i in paths[:, -1]], dtype=object)
    desc = (
        f"make_hierarchical_text: {n_classes} leaf classes, depth {depth}, {n_features} words, "
        f"{model.words_per_node} words per node, noise {noise}, mean length {doc_length}"
    )
    meta = {"node_words": model.node_words, "class_prior": prior, "random_state": random_state}
    return _train_test(X, leaf_names[cls], tax, n_samples - n_test, tfidf, desc, meta)


def _check_arguments(
    n_samples: int,
    n_features: int,
    noise: float,
    doc_length: float,
    class_skew: float,
    test_size: float | int,
) -> int:
    """Refuse invalid arguments of :func:`make_hierarchical_text`; return the test size."""
    if n_samples < 2:
        raise ParameterError(f"n_samples must be >= 2, got {n_samples}")
    if n_features < 2:
        raise ParameterError(f"n_features must be >= 2, got {n_features}")
    if not 0.0 <= noise < 1.0:
        raise ParameterError(f"noise must be in [0, 1), got {noise}")
    if not (0 < doc_length < np.inf):
        raise ParameterError(f"doc_length must be a finite number > 0, got {doc_length}")
    if not np.isfinite(class_skew):
        raise ParameterError(f"class_skew must be a finite number, got {class_skew}")
    n_test = round(test_size * n_samples) if isinstance(test_size, float) else int(test_size)
    if not 1 <= n_test < n_samples:
        raise ParameterError(f"test_size gives {n_test} test documents out of {n_samples}")
    return n_test


def _level_cdf(level_weights: Sequence[float] | None, depth: int) -> np.ndarray:
    """The cumulative probabilities of drawing a topic word at each depth (uniform default)."""
    if level_weights is None:
        lw = np.full(depth, 1.0 / depth)
    else:
        lw = np.asarray(level_weights, dtype=np.float64)
        if lw.shape != (depth,) or (lw < 0).any() or lw.sum() <= 0:
            raise ParameterError(f"level_weights must be {depth} non-negative numbers")
        lw = lw / lw.sum()
    level_cdf = np.cumsum(lw)
    level_cdf[-1] = 1.0
    return level_cdf


def _draw_classes(
    rng: np.random.Generator, n_classes: int, n_samples: int, class_skew: float
) -> tuple[np.ndarray, np.ndarray]:
    """The class prior (Zipf of exponent ``class_skew`` over a random order) and each class."""
    prior = (np.arange(1, n_classes + 1, dtype=np.float64)) ** (-class_skew)
    prior = prior[rng.permutation(n_classes)]
    prior /= prior.sum()
    cls = (
        rng.choice(n_classes, size=n_samples, p=prior)
        if class_skew
        else rng.integers(0, n_classes, n_samples)
    )
    return prior, cls


@dataclass
class _TopicModel:
    """The words of every node and the samplers that draw the tokens of a document.

    Attributes
    ----------
    paths : ndarray of shape (n_classes, depth)
        Node ids on the path to each leaf class (:func:`random_level_tree`).
    node_words : ndarray of int32 of shape (n_nodes, words_per_node)
        The words each node owns (row 0, the root's, is -1: unused).
    bg_words : ndarray of int32 of shape (n_features,)
        The vocabulary in the random order of the background Zipf law.
    level_cdf : ndarray of shape (depth,)
        Cumulative probability of drawing a topic word at each depth.
    noise : float
        Probability that a token is background noise.
    n_features : int
    word_sampler, bg_sampler : CdfSampler
        Zipf draws of a word's rank within a node's words, and within the whole vocabulary.
    """

    paths: np.ndarray
    node_words: np.ndarray
    bg_words: np.ndarray
    level_cdf: np.ndarray
    noise: float
    n_features: int
    word_sampler: CdfSampler
    bg_sampler: CdfSampler

    @property
    def words_per_node(self) -> int:
        """Words owned by each non-root node."""
        return int(self.node_words.shape[1])

    @classmethod
    def draw(
        cls,
        rng: np.random.Generator,
        tax: Taxonomy,
        paths: np.ndarray,
        n_features: int,
        noise: float,
        level_cdf: np.ndarray,
        words_per_node: int | None,
    ) -> _TopicModel:
        """Draw the words of every node (disjoint when the vocabulary is large enough)."""
        n_nodes = tax.n_nodes
        if words_per_node is None:
            words_per_node = int(
                max(2, min(50, n_features * (1 - noise / 2) // max(1, n_nodes - 1)))
            )
        if words_per_node < 1:
            raise ParameterError(f"words_per_node must be >= 1, got {words_per_node}")
        n_topic = n_nodes - 1
        if words_per_node * n_topic <= n_features:
            node_words = rng.permutation(n_features)[: words_per_node * n_topic]
        else:
            node_words = rng.integers(0, n_features, words_per_node * n_topic)
        node_words = np.vstack(
            [np.full((1, words_per_node), -1), node_words.reshape(n_topic, words_per_node)]
        ).astype(np.int32)
        return cls(
            paths,
            node_words,
            bg_words=rng.permutation(n_features).astype(np.int32),
            level_cdf=level_cdf,
            noise=noise,
            n_features=n_features,
            word_sampler=CdfSampler(zipf_cdf(words_per_node)),
            bg_sampler=CdfSampler(zipf_cdf(n_features)),
        )

    def corpus(
        self, rng: np.random.Generator, cls: np.ndarray, lengths: np.ndarray, docs_per_chunk: int
    ) -> sp.csr_matrix:
        """Word counts of documents of classes ``cls`` and ``lengths`` tokens, by chunks."""
        blocks = [
            self.counts(
                rng, cls[start : start + docs_per_chunk], lengths[start : start + docs_per_chunk]
            )
            for start in range(0, len(cls), docs_per_chunk)
        ]
        X = sp.vstack(blocks, format="csr") if len(blocks) > 1 else blocks[0]
        X.sort_indices()
        return X

    def counts(
        self, rng: np.random.Generator, cls: np.ndarray, lengths: np.ndarray
    ) -> sp.csr_matrix:
        """Word counts (CSR of shape (len(cls), n_features)) of documents of classes ``cls``."""
        n_docs = len(cls)
        doc = np.repeat(np.arange(n_docs, dtype=np.int32), lengths)
        T = len(doc)
        words = np.empty(T, dtype=np.int32)
        is_noise = rng.random(T) < self.noise
        nz = np.flatnonzero(is_noise)
        words[nz] = self.bg_words[self.bg_sampler.sample(rng.random(len(nz)))]
        tp = np.flatnonzero(~is_noise)
        level = np.searchsorted(self.level_cdf, rng.random(len(tp)), side="right")
        node = self.paths[cls[doc[tp]], level]
        words[tp] = self.node_words[node, self.word_sampler.sample(rng.random(len(tp)))]
        counts = sp.coo_matrix(
            (np.ones(T, dtype=np.float64), (doc, words)), shape=(n_docs, self.n_features)
        ).tocsr()
        counts.sum_duplicates()
        return counts


def _train_test(
    X: sp.csr_matrix,
    y: np.ndarray,
    tax: Taxonomy,
    n_train: int,
    tfidf: bool,
    desc: str,
    meta: dict[str, Any],
) -> tuple[HierDataset, HierDataset]:
    """The first ``n_train`` documents and the rest, as sublinear TF-IDF fitted on the first
    (the counts when not ``tfidf``)."""
    X_tr, X_te = X[:n_train], X[n_train:]
    if tfidf:
        from sklearn.feature_extraction.text import TfidfTransformer

        tr = TfidfTransformer(sublinear_tf=True)
        X_tr = tr.fit_transform(X_tr)
        X_te = tr.transform(X_te)
    features = [f"w{j}" for j in range(X.shape[1])]
    return (
        HierDataset(
            int32_csr(X_tr), y[:n_train], tax, features, "hierarchical-text", desc, dict(meta)
        ),
        HierDataset(
            int32_csr(X_te), y[n_train:], tax, features, "hierarchical-text", desc, dict(meta)
        ),
    )
