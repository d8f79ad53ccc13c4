"""HTTP requests to the servers the tests start on 127.0.0.1 (plain HTTP).

`httpx.get` makes a client, and with it an SSL context loading the whole CA bundle, for each
call: about 40 ms of CPU, even for a plain-HTTP URL. A test polling a starting server every
50 ms spent most of a core on that. `get` is `httpx.get` with one SSL context made once."""

import httpx

TLS = httpx.create_ssl_context()


def get(url, **options):
    """`httpx.get(url, **options)`: a new connection each call, as before."""
    return httpx.get(url, verify=TLS, **options)
