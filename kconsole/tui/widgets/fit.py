"""Fitting a table's columns into the width it has, as k9s does: columns size to their content,
the least important ones step aside when space runs out, and the long free-text column (MESSAGE,
DETAIL) takes whatever width is left instead of a fixed cap.

A column's :class:`Fit` says how it gives way: ``keep`` 0 never hides (the columns that carry the
panel's meaning); higher numbers hide first. ``shrink_to`` lets a column be cut (with an ellipsis)
down to that many cells, and ``grow`` marks the free-text column that is cut first and gets the
remaining width.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Cells between two columns.
GAP = 2


@dataclass(frozen=True, slots=True)
class Fit:
    keep: int = 1
    shrink_to: int | None = None
    grow: bool = False


#: How kubectl's usual columns give way, by header (any panel or kind may override).
DEFAULT_FITS: dict[str, Fit] = {
    "NAME": Fit(keep=0, shrink_to=20),
    "NAMESPACE": Fit(keep=2),
    "STATUS": Fit(keep=0),
    "READY": Fit(keep=0),
    "AGE": Fit(keep=4),
    "RESTARTS": Fit(keep=3),
    "MESSAGE": Fit(keep=0, shrink_to=20, grow=True),
    "DETAIL": Fit(keep=0, shrink_to=16, grow=True),
    "REASON": Fit(keep=0),
}

#: What an unlisted column does: shown whole while there is room, hidden before the key columns.
PLAIN = Fit()


def fits_for(columns: Sequence[str], overrides: Mapping[str, Fit]) -> list[Fit]:
    """The Fit of each column, by upper-cased header: the table's own first, then the defaults."""
    out = []
    for name in columns:
        key = name.upper()
        out.append(overrides.get(key) or DEFAULT_FITS.get(key) or PLAIN)
    return out


def fit_widths(natural: Sequence[int], fits: Sequence[Fit], available: int) -> list[int]:
    """Each column's drawn width (0: hidden) so the row fits ``available`` cells when it can.

    Optional columns are hidden (highest ``keep`` first, rightmost first among equals) while the
    row, with its free-text column at its smallest, is too wide; then cuttable columns are cut
    (free text first); free text then gets whatever is left. A row that still does not fit
    scrolls sideways: nothing with ``keep`` 0 is ever hidden."""
    n = len(natural)
    shown = list(range(n))

    def need(cols: list[int], cut: bool) -> int:
        total = 0
        for i in cols:
            f = fits[i]
            w = natural[i]
            if f.shrink_to is not None and (cut or f.grow):
                w = min(w, f.shrink_to)
            total += w
        return total + GAP * max(0, len(cols) - 1)

    while need(shown, cut=False) > available:
        optional = [i for i in shown if fits[i].keep > 0]
        if not optional:
            break
        shown.remove(max(optional, key=lambda i: (fits[i].keep, i)))
    widths = [0] * n
    for i in shown:
        widths[i] = natural[i]
    excess = sum(widths) + GAP * max(0, len(shown) - 1) - available
    if excess > 0:
        cuttable = sorted((i for i in shown if fits[i].shrink_to is not None), key=lambda i: (not fits[i].grow, -i))
        for i in cuttable:
            if excess <= 0:
                break
            cut = min(excess, widths[i] - min(widths[i], fits[i].shrink_to or 0))
            widths[i] -= cut
            excess -= cut
    return widths
