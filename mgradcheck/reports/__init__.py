"""One small writer per report format, all reading :class:`~mgradcheck.results.Report`."""
