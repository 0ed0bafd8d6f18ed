"""The exit codes of every command (`retrieval-eval` and its `nightly`), defined once so a script or a
CI job reads one meaning per number whichever command it ran."""

EXIT_OK = 0
EXIT_FAILED = 1  # unknown set, retriever or run; regression with --fail-on-regression; run not acceptable
EXIT_INVALID = 2  # usage errors and invalid input (click uses 2 for its usage errors too)
EXIT_INCOMPLETE = 3  # the retriever, or a service it needs, failed (on some questions, or while it was built)
EXIT_INTERNAL = 4  # a bug: an exception nobody anticipated
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT), as shells report a command a signal 2 ended
