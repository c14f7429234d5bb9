"""Analyses on top of ratings: anchors, power, planning, reliability, accuracy and bias."""
