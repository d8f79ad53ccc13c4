"""Serving: settings, the worker supervisor, the ASGI app, caches, ETags and publishing."""
