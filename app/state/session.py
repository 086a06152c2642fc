"""The typed session state: one :class:`AppState` per browser session, in ``st.session_state``.

Nobody sees anyone else's uploads or runs. The pages' other session values (the guided demos'
and the paper tables' results) are typed dictionaries reached through :func:`session_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import streamlit as st

if TYPE_CHECKING:
    from app.state.background import BackgroundComparison
    from app.state.compare import ComparisonEntry
    from app.state.data import DatasetEntry
    from app.state.jobs import Job
    from app.state.runs import Run
    from hierlab import Taxonomy

__all__ = ["STATE_KEY", "AppState", "get_state", "session_dict"]

#: where the :class:`AppState` lives in ``st.session_state`` (AppTest reads it there)
STATE_KEY = "hierlab_state"


@dataclass
class AppState:
    """Everything one browser session holds.

    Attributes
    ----------
    datasets : dict of str -> DatasetEntry
        The data sets loaded in this session, by key.
    current : str or None
        Key of the current data set.
    runs : list of Run
        The run history, oldest first.
    comparisons : list of ComparisonEntry
    induced : dict of str -> dict
        Per data set key, the MF-Tree taxonomy induced on the Taxonomy page
        (:func:`app.state.data.induce_taxonomy`).
    use_induced : dict of str -> bool
        Per data set key, whether Train and Compare use the induced taxonomy.
    next_id : int
        The id the next run or comparison gets.
    background : list of BackgroundComparison
        Comparisons running in the worker process (:mod:`app.state.background`).
    landed : list of int
        Ids of background comparisons that finished since the Compare page was last shown.
    jobs : list of Job
        Training and tuning jobs running in threads, and those finished lately
        (:mod:`app.state.jobs`).
    tuned : dict of str -> dict
        Per data set key, the last "Choose C" search on it: ``method``, ``best_C``, ``path``
        (one row per C), ``time``.
    cluster : str or None
        The dask scheduler (``tcp://host:port``) comparisons and "Choose C" run on; None: this
        machine (:func:`app.ui.jobs.cluster_setting`).
    """

    datasets: dict[str, DatasetEntry] = field(default_factory=dict)
    current: str | None = None
    runs: list[Run] = field(default_factory=list)
    comparisons: list[ComparisonEntry] = field(default_factory=list)
    induced: dict[str, Any] = field(default_factory=dict)
    use_induced: dict[str, bool] = field(default_factory=dict)
    next_id: int = 1
    background: list[BackgroundComparison] = field(default_factory=list)
    landed: list[int] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    tuned: dict[str, dict[str, Any]] = field(default_factory=dict)
    cluster: str | None = None

    def new_id(self) -> int:
        """A fresh id for a run or comparison."""
        k = self.next_id
        self.next_id += 1
        return k

    @property
    def dataset(self) -> DatasetEntry | None:
        """The current data set."""
        return self.datasets.get(self.current) if self.current else None

    def add_dataset(self, entry: DatasetEntry, make_current: bool = True) -> None:
        """Add (or replace, by key) a data set; earlier runs stay."""
        self.datasets[entry.key] = entry
        if make_current:
            self.current = entry.key

    def run(self, run_id: int) -> Run | None:
        """The run with id ``run_id``."""
        return next((r for r in self.runs if r.id == run_id), None)

    def training_taxonomy(self) -> tuple[Taxonomy | None, str]:
        """The taxonomy to train with on the current data set and where it comes from."""
        ds = self.dataset
        if ds is None:
            return None, "given"
        ind = self.induced.get(ds.key)
        if ind is not None and self.use_induced.get(ds.key):
            return ind["taxonomy"], "induced"
        return ds.taxonomy, "given"


def get_state() -> AppState:
    """This session's :class:`AppState` (created on first use)."""
    if STATE_KEY not in st.session_state:
        st.session_state[STATE_KEY] = AppState()
    state: AppState = st.session_state[STATE_KEY]
    return state


def session_dict(key: str) -> dict[str, Any]:
    """A dictionary kept in this session under ``key`` (created empty on first use)."""
    out: dict[str, Any] = st.session_state.setdefault(key, {})
    return out
