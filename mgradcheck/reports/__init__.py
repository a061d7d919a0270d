"""One small writer per report format, all reading :class:`~mgradcheck.run.results.Report`."""
