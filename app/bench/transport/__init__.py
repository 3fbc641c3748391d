"""How the benchmark client reaches a server: the hosts it may talk to (`hosts`, stated in
the API's schema by `url_schema`), the chat endpoint and its clients (`endpoint`), an httpx
transport (`pool`) on a network backend that stamps every received byte with its arrival
time (`stamped_socket`, `stamped_stream`, `stamped_tls`), one HTTP/1.1 exchange (`http1`,
the body's framing in `body`) and the event loop it all runs on (`event_loops`).

The bottom room: it imports nothing else of the client."""
