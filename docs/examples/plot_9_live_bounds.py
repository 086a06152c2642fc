"""
Watching a fit: LiveBounds
==========================

:class:`hierlab.notebook.LiveBounds` is an ordinary fit callback. In Jupyter it draws the bounds
in the cell while ``fit`` runs (a plotly ``FigureWidget``, redrawn at most four times a second);
in a script, like this one, it prints a progress line instead. Its ``history`` is the table of
every state it saw: here HR-SVM's global dual coordinate descent (seed 001) closing its
certified gap.
"""

# %%
import sys

import hierlab
from hierlab.notebook import LiveBounds

train, test = hierlab.make_hierarchical_text(
    n_samples=800, n_classes=12, n_features=400, depth=2, random_state=0
)
live = LiveBounds(title="HR-SVM", stream=sys.stdout, min_interval=0.5)
est = hierlab.HRSVMClassifier(taxonomy=train.taxonomy).fit(train.X, train.y, callbacks=[live])
print(live.mode_, "mode;", len(live.states), "states,", live.n_draws, "redraws")

# %%
hierlab.plots.bounds_figure(live.history, x="elapsed", title="HR-SVM, global dual CD")
