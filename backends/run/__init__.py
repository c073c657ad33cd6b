"""attn-select run: real paged-KV attention steps through each backend.

Nothing here imports torch at package import; the adapters do, and they are
loaded only when ``attn-select run`` executes. Which adapter runs a backend
is the backend spec's ``run_adapter`` ("module:Class") in the registry.
"""
