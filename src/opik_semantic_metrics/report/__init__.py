"""Tables, plots and HTML reports of experiment comparisons (no Opik import)."""
