"""A comparison of retrievers on one set as one view, with the JSON document `compare --json` prints and
its Markdown summary."""
