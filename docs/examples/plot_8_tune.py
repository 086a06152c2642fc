"""
Choosing C by a warm-started path
=================================

:func:`hierlab.tune` fits a path ``C = 0.01 ... 100`` on 80% of the rows, each fit started from
the previous one's dual point (the seed-000 family) and certified, scores it on the other 20% with
hierarchical F1, and refits the best ``C``. ``C`` multiplies the *sum* of the losses, as in
scikit-learn's ``LinearSVC``, so the same value means the same in every method.
"""

# %%
import hierlab

train, test = hierlab.make_hieron_synthetic(
    n_train_per_label=10, n_test_per_label=5, depth=3, noise_std=0.3, random_state=0
)
res = hierlab.tune(hierlab.FlatMulticlassClassifier(taxonomy=train.taxonomy), train.X, train.y)
print(f"best C = {res.best_C:g} ({res.stopped}; {res.time:.1f} s)")
res.path.round(4)

# %%
import plotly.graph_objects as go  # noqa: E402

fig = go.Figure(go.Scatter(x=res.path["C"], y=res.path["score"], mode="lines+markers"))
fig.update_layout(
    xaxis={"type": "log", "title": "C"},
    yaxis_title="validation hierarchical F1",
    title=f"FLATMULT: the validation path (best C = {res.best_C:g})",
)
fig
