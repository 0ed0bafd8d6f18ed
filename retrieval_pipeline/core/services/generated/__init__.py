"""Generated questions: what a generator is asked for, the filters its questions pass, its cache, the
judging file it writes, and the questions it adds, kept apart until they are shown to rank the
retrievers as the human questions do."""
