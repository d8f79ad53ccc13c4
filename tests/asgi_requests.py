"""The ASGI scope of a GET as uvicorn hands it to the app, for tests that drive the served app
message by message (a stream's pieces, a client that leaves)."""


def get_scope(path: str, query: str = "", headers: tuple = ()) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"site"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("site", 80),
    }
