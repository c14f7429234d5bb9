"""One-file offline HTML/Markdown report and the local read-only explorer."""
