"""The application's wiring: handlers, renders, viewport drawing, presets, dependencies and
preferences (see ``runtime/__init__``)."""
