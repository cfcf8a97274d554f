"""The figures a chart function draws, kept where it would have written its PNG (test_charts.py,
test_history_charts.py)."""

from suitereport import palette
from suitereport.charts import plt


def kept_figures(monkeypatch, module):
    """For a fixture: module.save (the PNG writer the module's charts call) replaced by one that keeps the
    figure; colours from an empty palette (the first backend drawn gets the first family and marker), the
    palette as it was after."""
    monkeypatch.setattr(palette, "_styles", {})
    figures = []

    def keep(fig, path):
        figures.append(fig)
        return fig

    monkeypatch.setattr(module, "save", keep)
    yield figures
    for fig in figures:
        plt.close(fig)
