"""Every registered method with its own ``preset="paper"``, nothing overridden, on
``20newsgroups-524`` gives a model that is not trivial (issue #38; the data and the check:
``tests/methods/_paper_presets.py``)."""

from __future__ import annotations

import pytest

from hierlab.core.registry import list_methods
from tests.methods._paper_presets import check_paper_preset

pytestmark = [pytest.mark.slow, pytest.mark.realdata]


@pytest.mark.parametrize("method", list_methods())
def test_paper_preset_gives_a_nontrivial_model(method: str) -> None:
    check_paper_preset(method, "20newsgroups-524")
