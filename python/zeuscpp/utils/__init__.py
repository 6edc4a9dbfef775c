"""Helpers shared by zeuscpp's modules (upstream ``zeus.utils``)."""
