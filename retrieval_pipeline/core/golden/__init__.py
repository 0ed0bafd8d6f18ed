"""Golden question sets and their import: the set model, files, BEIR and TREC readers, set versions and the label audit."""
