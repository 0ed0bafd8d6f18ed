"""The Parquet result store: layout, durable writes, run tables, history and retention."""
