"""Routines: saved from successful runs, run again without the model, scheduled with the OS."""
