"""One streaming request, timed as bytes arrive: the request itself (`request`), its
Server-Sent Events (`sse`) and what they said, kept within bounds (`state`), how the tokens
arrived and whether decode can be measured from that (`arrival`), and counting a prompt with
the server's own tokenizer (`tokenize`).

Imports the transport and the client's result models; never the stages or the quality
checks."""
