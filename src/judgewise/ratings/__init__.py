"""Rating methods: scores with honest uncertainty from pairwise judgments."""
