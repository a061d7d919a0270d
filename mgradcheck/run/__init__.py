"""Running entries: one child per run, observed, judged, collected into a report."""
