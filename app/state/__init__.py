"""The app's typed session state and the wiring between the pages and ``hierlab``.

Pages read like a description of the screen; what they do to data goes through here or
straight to ``hierlab``:

* :mod:`app.state.session`: one :class:`AppState` per browser session (``get_state``);
* :mod:`app.state.data`: built-in, example and uploaded data sets (parsing cached), their
  splits, the validation report, and MF-Tree induction of a taxonomy;
* :mod:`app.state.runs`: training a run with the live plot's callbacks, the run history, the
  methods offered and their starting values;
* :mod:`app.state.compare`: methods compared on identical splits.
"""

from __future__ import annotations

from app.state.compare import ComparisonEntry, compare_methods
from app.state.data import (
    DEFAULT_BUILTINS,
    Builtin,
    DatasetEntry,
    builtin_choices,
    example_files,
    generator_params,
    induce_taxonomy,
    load_builtin,
    make_entry,
    parse_upload,
    report_messages,
    resplit,
    upload_entry,
    validation_report,
)
from app.state.runs import (
    Run,
    compatible_methods,
    default_baseline,
    default_method,
    delete_run,
    display_name,
    distinguishing_params,
    fit_run,
    iteration_budget,
    json_default,
    method_check,
    resolved_params,
    run_from_result,
    run_label,
    runs_json,
    runs_table,
    suggested_params,
)
from app.state.session import STATE_KEY, AppState, get_state, session_dict

__all__ = [
    "DEFAULT_BUILTINS",
    "STATE_KEY",
    "AppState",
    "Builtin",
    "ComparisonEntry",
    "DatasetEntry",
    "Run",
    "builtin_choices",
    "compare_methods",
    "compatible_methods",
    "default_baseline",
    "default_method",
    "delete_run",
    "display_name",
    "distinguishing_params",
    "example_files",
    "fit_run",
    "generator_params",
    "get_state",
    "induce_taxonomy",
    "iteration_budget",
    "json_default",
    "load_builtin",
    "make_entry",
    "method_check",
    "parse_upload",
    "report_messages",
    "resolved_params",
    "resplit",
    "run_from_result",
    "run_label",
    "runs_json",
    "runs_table",
    "session_dict",
    "suggested_params",
    "upload_entry",
    "validation_report",
]
