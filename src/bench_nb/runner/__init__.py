"""runner."""
