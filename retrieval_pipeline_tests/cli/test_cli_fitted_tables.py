"""Fitting a table to the console: what the narrow-terminal tests of each command rely on, at widths no
command's test reaches."""

from __future__ import annotations

import io

from printed_tables import left_out, printed_table
from rich.console import Console

from retrieval_pipeline.cli.render.fitted_tables import Column, print_fitted

COLUMNS = [Column("retriever", "left", identifier=True), Column("top-1"), Column("MRR@10", optional=1)]
ROWS = [["a_retriever_with_a_long_name", "33.3% (80/240)", "0.476"]]


def printed(width: int) -> str:
    output = io.StringIO()
    print_fitted(Console(file=output, width=width), "Overall", COLUMNS, ROWS)
    return output.getvalue()


def test_a_table_that_fits_is_printed_as_it_is():
    text = printed(80)

    table = printed_table(text, "Overall")
    assert table.rows() == [{"retriever": ROWS[0][0], "top-1": ROWS[0][1], "MRR@10": ROWS[0][2]}]
    assert left_out(text, "Overall") == []


def test_a_narrower_console_folds_the_identifier_wraps_the_figure_then_leaves_out_what_may_go():
    text = printed(28)

    table = printed_table(text, "Overall")
    assert table.column("retriever").replace(" ", "") == ROWS[0][0]
    assert table.column("top-1") == "33.3% (80/240)"
    assert left_out(text, "Overall") == ["MRR@10"]


def test_where_even_the_columns_always_shown_cannot_fit_the_lines_run_long_rather_than_cut_a_figure():
    text = printed(12)

    table = printed_table(text, "Overall")
    assert table.column("top-1") == "33.3% (80/240)"
    assert "…" not in text
