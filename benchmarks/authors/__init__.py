"""Runs of the papers' own public code beside the engine, for the reproduction pages' "Misses and
their causes" (not imported by the tests; each script says how to get the code it needs and
exits with a message when it is absent)."""
