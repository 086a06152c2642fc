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

from app.state import compare, data, runs, session
from app.state.compare import *  # noqa: F403
from app.state.data import *  # noqa: F403
from app.state.runs import *  # noqa: F403
from app.state.session import *  # noqa: F403

__all__ = [*session.__all__, *data.__all__, *runs.__all__, *compare.__all__]
