"""The `http` kind (`retriever.py`) and how every adapter asks a JSON service (`client.py`, `transport.py`)."""
