"""A figure that shows itself as a picture when it is a notebook cell's result.

The plot functions build figures without pyplot (no global state), so Jupyter's inline
backend never registers a PNG formatter for them and a cell ending in ``fig`` would show
only ``<Figure size ...>``. This class carries its own rich representation instead, so
the picture appears in JupyterLab and in papermill/nbconvert outputs whatever the kernel's
matplotlib backend (inline, Agg, none chosen); batch code that only saves is unaffected,
since the PNG is drawn only when a notebook asks for it.
"""
from __future__ import annotations

import io
from collections.abc import Container

from matplotlib.figure import Figure

__all__ = ["InlineFigure", "figure_caption"]


class InlineFigure(Figure):
    """A ``matplotlib.figure.Figure`` that IPython displays as a PNG image."""

    def _repr_mimebundle_(self, include: Container[str] | None = None,
                          exclude: Container[str] | None = None) -> dict[str, bytes | str]:
        bundle: dict[str, bytes | str] = {"text/plain": figure_caption(self)}
        if (include is None or "image/png" in include) and not (exclude and "image/png" in exclude):
            buf = io.BytesIO()
            # tight: captions and outside legends sit beyond the figure edge, as in savefig
            self.savefig(buf, format="png", bbox_inches="tight")
            bundle["image/png"] = buf.getvalue()
        return bundle


def figure_caption(fig: Figure) -> str:
    """A one-line text stand-in for ``fig`` (its titles): what text-only views show."""
    titles = [fig.get_suptitle(), *(ax.get_title() for ax in fig.axes)]
    named = [t for t in dict.fromkeys(titles) if t]
    return f"[figure: {' / '.join(named) if named else 'untitled'}]"
