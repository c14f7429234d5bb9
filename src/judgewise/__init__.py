"""judgewise: evaluate language models with an LLM judge, reliably and at the lowest cost."""

__version__ = "0.1.0"
