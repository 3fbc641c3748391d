"""The benchmark's stages, one module each, in the order a run takes them.

Each stage takes the shared ``RunContext`` (the plan, the endpoint, the prompt sizer, the
step log) and returns its own part of the result; ``app.bench.procedure`` chains them.
"""
